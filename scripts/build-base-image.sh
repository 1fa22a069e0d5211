#!/usr/bin/env bash
# Builds the Debian base image the Containerfile starts from, for machines that reach no
# container registry but do reach a Debian archive: debootstrap a minimal root filesystem
# of this machine's Debian release, then `podman import` it.
#
#   scripts/build-base-image.sh [image]      default image: localhost/switchyard-base:<codename>
#
# Needs root (debootstrap makes device nodes and chowns), debootstrap and podman
# (apt-get install debootstrap podman runc). The mirror is the first Debian archive this
# machine's apt uses (override with DEBIAN_MIRROR). Elsewhere, `docker build -f Containerfile .` uses the
# public debian image instead and never runs this.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/podman-env.sh"

. /etc/os-release
CODENAME="${DEBIAN_CODENAME:-${VERSION_CODENAME:?/etc/os-release names no VERSION_CODENAME}}"
IMAGE="${1:-localhost/switchyard-base:$CODENAME}"

mirror_of_this_machine() {
  grep -rhoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -n 1 | tr -d ' ' || true
}
MIRROR="${DEBIAN_MIRROR:-$(mirror_of_this_machine)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"

ROOTFS="$IMAGE_WORK_DIR/rootfs-$CODENAME"
rm -rf "$ROOTFS"
mkdir -p "$ROOTFS"

# minbase: essential packages and apt, nothing else (no init, no man pages). The build
# stage installs Node.js and npm from this same archive with apt-get; the runtime stage
# needs only glibc, which minbase has.
echo "debootstrap $CODENAME from $MIRROR into $ROOTFS" >&2
debootstrap --variant=minbase "$CODENAME" "$ROOTFS" "$MIRROR" >&2

# Same archive for apt inside the image, and no apt caches or logs in the layer.
echo "deb $MIRROR $CODENAME main" >"$ROOTFS/etc/apt/sources.list"
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/log/*.log "$ROOTFS"/var/log/apt/* 2>/dev/null || true

tar --numeric-owner -C "$ROOTFS" -c . | podman_run import \
  --change 'CMD ["/bin/bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >&2
rm -rf "$ROOTFS"
echo "$IMAGE"
