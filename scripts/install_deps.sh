#!/usr/bin/env bash
# Installs every Debian package that pstrain's build, tests and main job need.
# Idempotent: packages already present are skipped, so a second run is quick.
set -euo pipefail

PACKAGES=(
  build-essential cmake ccache pkg-config
  protobuf-compiler libprotobuf-dev
  libgrpc++-dev protobuf-compiler-grpc libabsl-dev
  libgoogle-glog-dev libgflags-dev
  libgtest-dev libgmock-dev
  libboost-dev libboost-system-dev
  libssl-dev openssl
  libdnnl-dev
  libgoogle-perftools-dev
  zlib1g-dev
  nlohmann-json3-dev
  libcli11-dev
  libleveldb-dev
  libonnx-dev
  dataset-fashion-mnist
  python3-jsonschema python3-yaml
)

exec bash "$(dirname "$0")/apt_install.sh" "${PACKAGES[@]}"
