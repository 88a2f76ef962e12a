#!/usr/bin/env bash
# Installs every Debian package that pstrain's build, tests and main job need.
# Idempotent: packages already present are skipped, so a second run is quick.
set -euo pipefail

PACKAGES=(
  build-essential cmake ccache pkg-config
  protobuf-compiler libprotobuf-dev
  libgrpc++-dev protobuf-compiler-grpc
  libgoogle-glog-dev libgflags-dev
  libgtest-dev libgmock-dev
  libboost-dev libboost-system-dev
  libdnnl-dev
  zlib1g-dev
  nlohmann-json3-dev
  dataset-fashion-mnist
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "install_deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
