#!/usr/bin/env bash
# Installs the Debian packages that the benchmarks' references need: the
# PyTorch peer (bench/peers/pytorch), iperf3 (the loopback TCP limit set
# beside transfer_bench) and what ps-lite builds against (bench/pslite/),
# compared in docs/BENCHMARKS.md. Not needed to build
# or run pstrain. Idempotent: packages already present are skipped.
set -euo pipefail

PACKAGES=(
  python3-torch python3-numpy
  libopenblas0-openmp  # else torch's dense layers use the slow reference BLAS
  iperf3
  python3-matplotlib  # the scale model's plot (bench/scale/plot_scale.py)
  libzmq3-dev libprotobuf-dev protobuf-compiler  # ps-lite (bench/pslite/README.md)
)

exec bash "$(dirname "$0")/../scripts/apt_install.sh" "${PACKAGES[@]}"
