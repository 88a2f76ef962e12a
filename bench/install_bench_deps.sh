#!/usr/bin/env bash
# Installs the Debian packages that the benchmarks' references need: the
# PyTorch peer (shared/peers/pytorch) and iperf3 (the loopback TCP limit set
# beside transfer_bench), compared in docs/BENCHMARKS.md. Not needed to build
# or run pstrain. Idempotent: packages already present are skipped.
set -euo pipefail

PACKAGES=(
  python3-torch python3-numpy
  libopenblas0-openmp  # else torch's dense layers use the slow reference BLAS
  iperf3
)

exec bash "$(dirname "$0")/../scripts/apt_install.sh" "${PACKAGES[@]}"
