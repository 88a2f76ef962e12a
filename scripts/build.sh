#!/usr/bin/env bash
# Configures and builds pstrain into build/ (Release, ccache when present).
# Extra arguments go to the CMake configure step, e.g. -DPSTRAIN_SANITIZE=address,undefined.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${PSTRAIN_BUILD_DIR:-build}"
JOBS="${PSTRAIN_JOBS:-2}"
# The configure step's own lines (which backends are built) and nothing else.
cmake -S . -B "$BUILD_DIR" "$@" | { grep "^-- pstrain:" || true; }
cmake --build "$BUILD_DIR" -j"$JOBS"
