#!/usr/bin/env bash
# `npm run image`: builds the server image localhost/switchyard:latest (README "Image").
#
#   scripts/build-image.sh            build (or reuse, when its inputs are unchanged)
#   scripts/build-image.sh --force    build from nothing: no reuse, no layer cache (picks up
#                                     Debian updates and a fresh npm download)
#
# With a docker engine that answers (`docker info`), a plain `docker build` from the public
# debian image. Otherwise podman, from a Debian base built locally by
# scripts/build-base-image.sh when absent (no registry needed). The image is also tagged
# localhost/switchyard:inputs-<hash of the files it is built from>, so an unchanged tree
# reuses it at once; the last line printed is that tag.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FORCE=0
NO_CACHE=()
if [[ "${1:-}" == "--force" ]]; then
  FORCE=1
  NO_CACHE=(--no-cache)
fi

IMAGE="localhost/switchyard"

# A TLS-inspecting proxy between this machine and the npm registry: its CA bundle goes to
# the npm step as a build secret (Containerfile), never into the image.
SECRET=()
if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -r "${NODE_EXTRA_CA_CERTS}" ]]; then
  SECRET=(--secret "id=ca_bundle,src=$NODE_EXTRA_CA_CERTS")
fi

# What the image is made of: the Containerfile, the ignore file and what it lets through.
inputs_hash() {
  { printf '%s\n' Containerfile .dockerignore package.json package-lock.json tsconfig.json scripts/build-image.sh
    find sql workers src -type f
  } | LC_ALL=C sort | tr '\n' '\0' | xargs -0 sha256sum | sha256sum | cut -c1-16
}
TAG="$IMAGE:inputs-$(inputs_hash)"

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  if [[ $FORCE == 0 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "reusing $TAG (inputs unchanged)" >&2
  else
    DOCKER_BUILDKIT=1 docker build "${NO_CACHE[@]}" "${SECRET[@]}" -f Containerfile -t "$TAG" . >&2
  fi
  docker tag "$TAG" "$IMAGE:latest"
  echo "$TAG"
  exit 0
fi

if ! command -v podman >/dev/null 2>&1; then
  echo "npm run image: neither a docker engine nor podman is available (apt-get install podman runc debootstrap)" >&2
  exit 1
fi
source scripts/podman-env.sh

if [[ $FORCE == 0 ]] && podman_run image exists "$TAG"; then
  echo "reusing $TAG (inputs unchanged)" >&2
else
  . /etc/os-release
  BASE="localhost/switchyard-base:${VERSION_CODENAME:-bookworm}"
  if ! podman_run image exists "$BASE"; then
    echo "no $BASE yet: building it with debootstrap" >&2
    scripts/build-base-image.sh "$BASE" >/dev/null
  fi
  podman_run build --runtime runc --network host --pull=never --format docker \
    "${NO_CACHE[@]}" "${SECRET[@]}" --build-arg "BASE_IMAGE=$BASE" -f Containerfile -t "$TAG" . >&2
fi
podman_run tag "$TAG" "$IMAGE:latest"
echo "$TAG"
