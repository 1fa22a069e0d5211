# Sourced by the image scripts: how podman runs on machines like the project's own build and
# test hosts, without editing anything under /etc.
#
# There, crun (podman's default runtime) fails to apply rlimits and cgroups inside the
# sandbox the host itself runs in, so every podman call uses runc, host networking (no
# network namespace to set up; the build reaches Debian's archive and npm the way the host
# does) and a containers.conf of our own, pointed at by CONTAINERS_CONF, that
#   - sets no default ulimits ([containers] default_ulimits = []): podman otherwise asks the
#     runtime for an nofile/nproc limit the sandbox refuses;
#   - uses the cgroupfs cgroup manager ([engine] cgroup_manager = "cgroupfs"): there is no
#     systemd to ask for a cgroup;
#   - names runc as the runtime ([engine] runtime = "runc"), for the podman calls these
#     scripts do not make themselves (podman-compose's, under scripts/compose.sh).
# The file lives in the repository's ignored .tmp/ folder, so nothing outside the checkout
# changes. On a host with a working podman setup these settings are harmless.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGE_WORK_DIR="${IMAGE_WORK_DIR:-$REPO_ROOT/.tmp/image}"
mkdir -p "$IMAGE_WORK_DIR"

export CONTAINERS_CONF="$IMAGE_WORK_DIR/containers.conf"
cat >"$CONTAINERS_CONF" <<'CONF'
[containers]
default_ulimits = []

[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
CONF

# podman with the runtime every call here needs (the network is chosen per command).
podman_run() { podman --runtime runc "$@"; }
