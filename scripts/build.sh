#!/usr/bin/env bash
# Configures and builds pstrain into build/ (Release, ccache when present).
# Extra arguments go to the CMake configure step, e.g. -DPSTRAIN_SANITIZE=address,undefined.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${PSTRAIN_BUILD_DIR:-build}"
JOBS="${PSTRAIN_JOBS:-2}"
cmake -S . -B "$BUILD_DIR" "$@" >/dev/null
cmake --build "$BUILD_DIR" -j"$JOBS"
