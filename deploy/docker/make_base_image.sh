#!/usr/bin/env bash
# Makes the debian:12 base image the Dockerfile starts from, where no image
# registry can be reached: a minimal Debian 12 (bookworm) tree made with
# debootstrap from Debian's archive, imported into the local Docker engine.
# Does nothing when the engine already has debian:12 (FORCE=1 makes it again).
#   bash deploy/docker/make_base_image.sh [MIRROR]   (default http://deb.debian.org/debian)
set -euo pipefail
MIRROR="${1:-http://deb.debian.org/debian}"
TAG=debian:12
if [[ "${FORCE:-0}" != 1 ]] && docker image inspect "$TAG" >/dev/null 2>&1; then
  echo "$TAG is already there"
  exit 0
fi
if ! command -v debootstrap >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap >/dev/null
fi
dir="$(mktemp -d /tmp/debian12-rootfs.XXXXXX)"
trap 'rm -rf "$dir"' EXIT
echo "debootstrap bookworm from $MIRROR into $dir"
debootstrap --variant=minbase bookworm "$dir" "$MIRROR" >"$dir.log" 2>&1 ||
  { tail -n 20 "$dir.log"; exit 1; }
rm -f "$dir.log"
# As Debian's own images: no package lists or caches in the image.
rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/*.bin
tar -C "$dir" -c . | docker import --change 'CMD ["bash"]' - "$TAG"
docker image ls "$TAG"
