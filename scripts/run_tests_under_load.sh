#!/usr/bin/env bash
# Runs the whole suite as scripts/run_tests.sh does, while stress-ng keeps
# every core busy: a test that passes only on an idle machine fails here.
#   bash scripts/run_tests_under_load.sh [ROUNDS]   # default 1; stops at the first failing round
# Extra ctest arguments go in CTEST_ARGS (say, CTEST_ARGS="-LE deploy").
set -euo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-1}"
bash scripts/install_deps.sh
bash scripts/apt_install.sh stress-ng
bash scripts/build.sh
stress-ng --cpu "$(nproc)" --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null || true' EXIT
cd "${PSTRAIN_BUILD_DIR:-build}"
for ((r = 1; r <= rounds; r++)); do
  echo "run_tests_under_load: round $r of $rounds beside stress-ng --cpu $(nproc)"
  # shellcheck disable=SC2086
  ctest --output-on-failure -j2 --timeout 900 ${CTEST_ARGS:-}
done
