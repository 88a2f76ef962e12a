#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang under AddressSanitizer and
# UndefinedBehaviorSanitizer into build-fuzz/, and runs each for FUZZ_SECS
# seconds (default 20) from its seed corpus (fuzz/corpus/<target>/). Exits 1
# if any target crashes; the input that did it is left in
# build-fuzz/crashes/<target>-crash-*, and its report in the log above.
#
#   bash scripts/run_fuzzers.sh [TARGET...]      (default: every target)
#   FUZZ_SECS=600 bash scripts/run_fuzzers.sh    (a longer campaign)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${PSTRAIN_FUZZ_BUILD_DIR:-build-fuzz}"
SECS="${FUZZ_SECS:-20}"
bash scripts/install_deps.sh
bash scripts/apt_install.sh clang libomp-dev  # Debian's clang carries libFuzzer
cmake -S . -B "$BUILD_DIR" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPSTRAIN_FUZZ=ON -DPSTRAIN_CUDA=OFF >/dev/null
cmake --build "$BUILD_DIR" --target fuzzers -j"${PSTRAIN_JOBS:-2}"

targets=("$@")
if (( ${#targets[@]} == 0 )); then
  targets=($(ls fuzz/corpus))
fi
mkdir -p "$BUILD_DIR/crashes"
failed=()
for t in "${targets[@]}"; do
  # New inputs the fuzzer finds go to a working corpus outside the
  # repository; the seeds stay as they are.
  work="$BUILD_DIR/corpus/$t"
  mkdir -p "$work"
  echo "== $t: ${SECS} s"
  if ! "$BUILD_DIR/fuzz/${t}_fuzz" -max_total_time="$SECS" -print_final_stats=1 \
      -artifact_prefix="$BUILD_DIR/crashes/$t-" "$work" "fuzz/corpus/$t" 2>"$BUILD_DIR/$t.log"; then
    tail -60 "$BUILD_DIR/$t.log"
    failed+=("$t")
  fi
  grep -a -E "^stat::number_of_executed_units|^stat::new_units_added|^stat::peak_rss_mb" \
    "$BUILD_DIR/$t.log" | tr '\n' ' '
  echo
done
if (( ${#failed[@]} > 0 )); then
  echo "crashed: ${failed[*]}"
  exit 1
fi
echo "every fuzz target ran ${SECS} s without a crash"
