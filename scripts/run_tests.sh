#!/usr/bin/env bash
# Builds pstrain and runs every test (unit and integration) under ctest.
# Installs what it needs first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
cd "${PSTRAIN_BUILD_DIR:-build}"
ctest --output-on-failure -j2 --timeout 900
