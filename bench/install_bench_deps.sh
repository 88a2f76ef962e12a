#!/usr/bin/env bash
# Installs the Debian packages that the PyTorch peer benchmark needs
# (shared/peers/pytorch, compared in docs/BENCHMARKS.md). Not needed to build
# or run pstrain. Idempotent: packages already present are skipped.
set -euo pipefail

PACKAGES=(
  python3-torch python3-numpy
  libopenblas0-openmp  # else torch's dense layers use the slow reference BLAS
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

echo "install_bench_deps: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
