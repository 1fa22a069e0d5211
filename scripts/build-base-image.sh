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

# The first archive URL ending in /$1 that this machine's apt sources name.
archive_of_this_machine() {
  grep -rhoE "https?://[^ ]+/$1/?( |\$)" /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -n 1 | tr -d ' ' || true
}
MIRROR="${DEBIAN_MIRROR:-$(archive_of_this_machine debian)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-$(archive_of_this_machine debian-security)}"
SECURITY_MIRROR="${SECURITY_MIRROR:-http://deb.debian.org/debian-security}"

ROOTFS="$IMAGE_WORK_DIR/rootfs-$CODENAME"
rm -rf "$ROOTFS"
mkdir -p "$ROOTFS"

# minbase: essential packages and apt, nothing else (no init, no man pages). The build
# stage installs Node.js and npm from this same archive with apt-get; the runtime stage
# needs only glibc, which minbase has.
echo "debootstrap $CODENAME from $MIRROR into $ROOTFS" >&2
debootstrap --variant=minbase "$CODENAME" "$ROOTFS" "$MIRROR" >&2

# The same archives for apt inside the image, security updates included: debootstrap
# installs the release as it was published, and the Containerfile's runtime stage
# upgrades from these. No apt caches or logs in the layer.
cat >"$ROOTFS/etc/apt/sources.list" <<SOURCES
deb $MIRROR $CODENAME main
deb $MIRROR $CODENAME-updates main
deb $SECURITY_MIRROR $CODENAME-security main
SOURCES
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/lib/apt/lists/* \
  "$ROOTFS"/var/log/*.log "$ROOTFS"/var/log/apt/* 2>/dev/null || true
# Manuals, info pages and translations are of no use in a server image (as in Debian's own
# slim images); the licence files stay.
rm -rf "$ROOTFS"/usr/share/man/* "$ROOTFS"/usr/share/info/* "$ROOTFS"/usr/share/locale/*
find "$ROOTFS"/usr/share/doc -type f ! -name copyright -delete

tar --numeric-owner -C "$ROOTFS" -c . | podman_run import \
  --change 'CMD ["/bin/bash"]' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  - "$IMAGE" >&2
rm -rf "$ROOTFS"
echo "$IMAGE"
