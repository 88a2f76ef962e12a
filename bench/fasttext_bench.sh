#!/usr/bin/env bash
# pstrain's fasttext recipe beside Debian's fastText 0.9.2 on Debian's package
# descriptions (tools/data/setup_data.sh datasets debian), taking turns:
# fastText `supervised` (dim 10, 5 epochs, lr 0.1, word bigrams, 2,000,000
# buckets, 2 threads) and pstrain_local (2 ps, 2 workers of one compute
# thread each, the same settings, batches of BATCH lines). Prints, per run:
# test accuracy, words per second per compute thread (fastText's own figure;
# pstrain's: the training file's tokens, "</s>" included, times the epochs,
# over the workers' training seconds and their 2 threads) and the wall time.
#
#   bash bench/fasttext_bench.sh [BUILD_DIR]     # RUNS=2 BATCH=128
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
RUNS="${RUNS:-2}"
BATCH="${BATCH:-128}"
EPOCHS=5
out="$(mktemp -d /tmp/pstrain_fasttext_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash scripts/apt_install.sh fasttext >/dev/null
bash tools/data/setup_data.sh datasets debian >/dev/null
data=datasets/debian
# fastText reads the words lowered, as pstrain's text input lowers them.
tr '[:upper:]' '[:lower:]' <"$data/train.txt" >"$out/train.txt"
tr '[:upper:]' '[:lower:]' <"$data/test.txt" >"$out/test.txt"
lines=$(wc -l <"$data/train.txt")
# Tokens a pass reads: the words (labels left out) and one "</s>" a line.
tokens=$(awk '{ n += NF - 1 + 1 } END { print n }' "$data/train.txt")
steps=$(( (lines + BATCH - 1) / BATCH * EPOCHS ))
echo "train: $lines lines, $tokens tokens a pass; $EPOCHS epochs, batch $BATCH, lr decaying to 0 over $steps steps"
printf '%-10s %10s %22s %10s\n' run accuracy "words/s/thread" wall
for (( r = 1; r <= RUNS; r++ )); do
  start=$(date +%s.%N)
  fasttext supervised -input "$out/train.txt" -output "$out/model" -dim 10 -epoch $EPOCHS -lr 0.1 \
    -wordNgrams 2 -bucket 2000000 -thread 2 -verbose 2 2>&1 | tr '\r' '\n' >"$out/ft.log"
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  rate=$(grep -o 'words/sec/thread: *[0-9]*' "$out/ft.log" | tail -1 | grep -o '[0-9]*$')
  accuracy=$(fasttext test "$out/model.bin" "$out/test.txt" | sed -n 's/^P@1\t//p')
  printf '%-10s %10s %22s %9.1fs\n' fastText "$accuracy" "$rate" "$wall"

  rm -rf "$out/train_dir"
  start=$(date +%s.%N)
  "$BUILD/deploy/pstrain_local" --ps=2 --workers=2 --model=fasttext --data_dir="$data" \
    --batch_size="$BATCH" --epochs=$EPOCHS --lr_schedule=polynomial_decay --decay_steps="$steps" \
    --train_dir="$out/train_dir" --http_port=-1 >"$out/pstrain.log" 2>&1
  wall=$(echo "$(date +%s.%N) - $start" | bc)
  accuracy=$(grep -o 'final: step [0-9]*, test accuracy [0-9.]*' "$out/pstrain.log" | grep -o '[0-9.]*$')
  # The workers' training: from the first "training" line to the last "done".
  secs=$(python3 - "$out/pstrain.log" <<'PY'
import re, sys, datetime
def t(line):
    m = re.search(r'(\d\d):(\d\d):(\d\d\.\d+)', line)
    return int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3])
lines = open(sys.argv[1]).read().splitlines()
begin = min(t(l) for l in lines if 'model is ready; training' in l)
end = max(t(l) for l in lines if '] worker:' in l and 'done after' in l)
print(f"{end - begin:.3f}")
PY
)
  rate=$(python3 -c "print(round($tokens * $EPOCHS / $secs / 2))")
  printf '%-10s %10s %22s %9.1fs   (%s s of training)\n' pstrain "$accuracy" "$rate" "$wall" "$secs"
done
