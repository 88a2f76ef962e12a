#!/usr/bin/env bash
# pstrain's movielens recipe beside scikit-learn's LogisticRegression on the
# same one-hot features (tests/sklearn/movielens_baseline.py, Debian's
# python3-sklearn), on MovieLens-100k with each user's 10 latest ratings held
# out (tools/data/setup_data.sh datasets movielens). Prints both test AUCs,
# pstrain's for RUNS runs of pstrain_local (2 ps, 2 workers, batches of 128,
# EPOCHS epochs).
#
#   bash bench/movielens_bench.sh [BUILD_DIR]     # RUNS=3 EPOCHS=3
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
RUNS="${RUNS:-3}"
EPOCHS="${EPOCHS:-3}"
out="$(mktemp -d /tmp/pstrain_movielens_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash scripts/apt_install.sh python3-sklearn >/dev/null
bash tools/data/setup_data.sh datasets movielens >/dev/null
/usr/bin/python3 tests/sklearn/movielens_baseline.py datasets/movielens
for (( r = 1; r <= RUNS; r++ )); do
  rm -rf "$out/train"
  "$BUILD/deploy/pstrain_local" --ps=2 --workers=2 --model=movielens --data_dir=datasets/movielens \
    --batch_size=128 --epochs="$EPOCHS" --train_dir="$out/train" --http_port=-1 >"$out/log" 2>&1
  echo "pstrain movielens, run $r: $(grep -o 'final: .*' "$out/log")"
done
