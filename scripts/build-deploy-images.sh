#!/usr/bin/env bash
# Builds the two images deploy/compose.yaml runs beside the server's, both from Debian
# packages on a Debian bookworm base (docs/operations.md "Deployment"):
#
#   localhost/switchyard-postgres:15     deploy/postgres.Containerfile (Debian's postgresql-15)
#   localhost/switchyard-haproxy:latest  deploy/haproxy.Containerfile  (Debian's haproxy)
#
#   scripts/build-deploy-images.sh            build (or reuse, when their inputs are unchanged)
#   scripts/build-deploy-images.sh --force    build from nothing: no reuse, no layer cache
#
# As scripts/build-image.sh: with a docker engine that answers, `docker build` from the public
# debian image; otherwise podman, from the Debian base scripts/build-base-image.sh builds
# on this machine (no registry needed), with runc and host networking (scripts/podman-env.sh).
# Each image is also tagged <name>:inputs-<hash of its Containerfile and the files it
# copies>, so an unchanged deploy/ reuses it at once. Prints the two tags.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

FORCE=0
NO_CACHE=()
if [[ "${1:-}" == "--force" ]]; then
  FORCE=1
  NO_CACHE=(--no-cache)
fi

# name, tag the compose file runs, Containerfile, then the files it copies (all in deploy/).
IMAGES=(
  "localhost/switchyard-postgres 15 postgres.Containerfile postgres-entrypoint.sh"
  "localhost/switchyard-haproxy latest haproxy.Containerfile haproxy.cfg haproxy-503.http"
)

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  TOOL=(docker)
  BASE_ARG=()
  build() { DOCKER_BUILDKIT=1 docker build "$@" >&2; }
elif command -v podman >/dev/null 2>&1; then
  source scripts/podman-env.sh
  TOOL=(podman_run)
  . /etc/os-release
  BASE="localhost/switchyard-base:${VERSION_CODENAME:-bookworm}"
  if ! podman_run image exists "$BASE"; then
    echo "no $BASE yet: building it with debootstrap" >&2
    scripts/build-base-image.sh "$BASE" >/dev/null
  fi
  BASE_ARG=(--build-arg "BASE=$BASE")
  build() { podman_run build --runtime runc --network host --pull=never --format docker "$@" >&2; }
else
  echo "build-deploy-images: neither a docker engine nor podman is available (apt-get install podman runc debootstrap)" >&2
  exit 1
fi

exists() {
  if [[ "${TOOL[0]}" == docker ]]; then docker image inspect "$1" >/dev/null 2>&1; else podman_run image exists "$1"; fi
}

for entry in "${IMAGES[@]}"; do
  read -r name tag containerfile copied <<<"$entry"
  # shellcheck disable=SC2086 # the copied files are a list
  hashed="$name:inputs-$(cd deploy && sha256sum "$containerfile" $copied ../scripts/build-deploy-images.sh | sha256sum | cut -c1-16)"
  if [[ $FORCE == 0 ]] && exists "$hashed"; then
    echo "reusing $hashed (inputs unchanged)" >&2
  else
    build "${NO_CACHE[@]}" "${BASE_ARG[@]}" -f "deploy/$containerfile" -t "$hashed" deploy
  fi
  "${TOOL[@]}" tag "$hashed" "$name:$tag"
  echo "$hashed"
done
