#!/usr/bin/env bash
# `npm run compose -- <arguments>`: deploy/compose.yaml on this machine, with the compose
# tool there is (docs/operations.md "Deployment").
#
#   npm run compose -- up -d        build the three images (or reuse them), then start
#   npm run compose -- ps           any other compose command, as given
#   npm run compose -- down -v      stop and remove the stack, its network and its volumes
#
# With a docker engine that answers, `docker compose`; otherwise Debian's podman-compose,
# with podman set up as scripts/podman-env.sh says (CONTAINERS_CONF: runc, cgroupfs, no
# default ulimits). Before `up`, the images are built the way `npm run image` builds the
# server's, each reused at once when its inputs are unchanged: localhost/switchyard
# (scripts/build-image.sh), PostgreSQL and HAProxy from Debian packages
# (scripts/build-deploy-images.sh). No container registry is needed. More compose files
# (-f …) and the command come after the arguments this script adds: `-f
# deploy/compose.yaml -p "${COMPOSE_PROJECT_NAME:-switchyard}"` (podman-compose 1.0.3 reads
# neither the file's `name:` nor COMPOSE_PROJECT_NAME, so the name is always passed).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  COMPOSE=(docker compose)
elif command -v podman-compose >/dev/null 2>&1; then
  source scripts/podman-env.sh
  COMPOSE=(podman-compose)
  # podman-compose 1.0.3 leaves `${NAME:-}` (an empty default) as it is written when NAME is
  # unset: the provider keys would reach the instances as that text. Set, even empty, it
  # substitutes the value.
  for name in $(grep -ohE '\$\{[A-Za-z_][A-Za-z0-9_]*:-\}' deploy/compose.yaml | sed -E 's/^\$\{(.*):-\}$/\1/' | sort -u); do
    export "$name=${!name-}"
  done
else
  echo "npm run compose: neither a docker engine nor podman-compose is available (apt-get install podman podman-compose runc debootstrap)" >&2
  exit 1
fi

PROJECT="${COMPOSE_PROJECT_NAME:-switchyard}"
command=""
for argument in "$@"; do
  if [[ "$argument" == up || "$argument" == down ]]; then
    command="$argument"
    break
  fi
done

if [[ "$command" == up ]]; then
  bash scripts/build-image.sh >/dev/null
  bash scripts/build-deploy-images.sh >/dev/null
fi

if [[ "${COMPOSE[0]}" != podman-compose || "$command" != down ]]; then
  exec "${COMPOSE[@]}" -f deploy/compose.yaml -p "$PROJECT" "$@"
fi

# podman-compose 1.0.3's `down` leaves the project's network, and with -v removes the named
# volumes but not the anonymous ones (the server image's /data): what docker compose's
# `down` removes, removed here after it.
anonymous=()
for container in $(podman ps --all --filter "label=io.podman.compose.project=$PROJECT" --format '{{.Names}}'); do
  for volume in $(podman inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}' "$container"); do
    [[ "$volume" == "${PROJECT}_"* ]] || anonymous+=("$volume")
  done
done
status=0
"${COMPOSE[@]}" -f deploy/compose.yaml -p "$PROJECT" "$@" || status=$?
if [[ " $* " == *" -v "* || " $* " == *" --volumes "* ]]; then
  for volume in "${anonymous[@]}"; do podman volume rm --force "$volume" >/dev/null || true; done
fi
if podman network exists "${PROJECT}_default"; then podman network rm "${PROJECT}_default" >/dev/null || true; fi
exit "$status"
