#!/usr/bin/env bash
# pstrain's fasttext recipe beside Debian's fastText 0.9.2 at fastText's own
# settings, taking turns, on splits of Debian's package descriptions this
# script makes itself (tools/data/make_debian_descriptions.py --split_seed:
# by source package, a tenth of the sources to test), one per seed in SEEDS.
# At each setting (-lr and -epoch, SETTINGS) both train with dim 10, word
# bigrams, 2,000,000 buckets, softmax: fastText `supervised` on 2 threads,
# pstrain_local on 2 ps and 2 workers of one compute thread each, given the
# same -lr and -epoch (--learning_rate, --epochs) and nothing else (the
# recipe's batches of 2048 lines; BATCH sets --batch_size): both decay the
# rate linearly to 0 over the run. Prints, per run: test accuracy, words per
# second per compute thread (fastText's own figure; pstrain's: the training
# file's tokens, "</s>" included, times the epochs, over the workers'
# training seconds and their 2 threads), the wall time, and the test lines
# whose label the training split lacks (both count them wrong). Each pair
# runs ROUNDS times, taking turns; with more than one, a last table gives
# each side's mean and range at each split and setting (two workers on one
# side and two threads on the other each add their updates without locks,
# so a run's accuracy moves by about a point from one run to the next).
#
#   bash bench/fasttext_bench.sh [BUILD_DIR]   # SEEDS="1 2" SETTINGS="0.5:5 1.0:25" ROUNDS=1 [BATCH=N]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
SEEDS="${SEEDS:-1 2}"
SETTINGS="${SETTINGS:-0.5:5 1.0:25}"
ROUNDS="${ROUNDS:-1}"
batch_flag=()
if [[ -n "${BATCH:-}" ]]; then batch_flag=(--batch_size="$BATCH"); fi
out="$(mktemp -d /tmp/pstrain_fasttext_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash scripts/apt_install.sh fasttext >/dev/null
bash tools/data/setup_data.sh datasets debian >/dev/null  # the apt lists
echo "lscpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
  "$(lscpu | grep -o 'avx512[a-z_0-9]*' | sort -u | tr '\n' ' ')"

# Words/s per thread of pstrain's run: from the first "training" line to the
# last worker's "done", over its 2 threads.
pstrain_rate() {
  python3 - "$1" "$2" <<'PY'
import re, sys
def t(line):
    m = re.search(r'(\d\d):(\d\d):(\d\d\.\d+)', line)
    return int(m[1]) * 3600 + int(m[2]) * 60 + float(m[3])
lines = open(sys.argv[1]).read().splitlines()
begin = min(t(l) for l in lines if 'model is ready; training' in l)
end = max(t(l) for l in lines if '] worker:' in l and 'done after' in l)
print("%d %.1f" % (round(float(sys.argv[2]) / (end - begin) / 2), end - begin))
PY
}

for seed in $SEEDS; do
  split="$out/split$seed"
  /usr/bin/python3 tools/data/make_debian_descriptions.py --lists_dir=datasets/debian/lists \
    --output_dir="$split" --split_seed="$seed" >/dev/null
  # fastText reads the words lowered, as pstrain's text input lowers them.
  tr '[:upper:]' '[:lower:]' <"$split/train.txt" >"$split/train.lower"
  tr '[:upper:]' '[:lower:]' <"$split/test.txt" >"$split/test.lower"
  lines=$(wc -l <"$split/train.txt")
  # Tokens a pass reads: the words (labels left out) and one "</s>" a line.
  tokens=$(awk '{ n += NF - 1 + 1 } END { print n }' "$split/train.txt")
  unseen=$(awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { n++ } END { print n + 0 }' \
    "$split/train.txt" "$split/test.txt")
  echo "split seed $seed: $lines train lines ($tokens tokens a pass)," \
    "$(wc -l <"$split/test.txt") test lines, $unseen with a label the training split lacks"
  printf '%-9s %5s %6s %9s %15s %9s\n' run lr epochs accuracy "words/s/thread" wall
  for setting in $SETTINGS; do
    lr=${setting%:*}
    epochs=${setting#*:}
    for ((round = 1; round <= ROUNDS; ++round)); do
      start=$(date +%s.%N)
      fasttext supervised -input "$split/train.lower" -output "$out/model" -dim 10 \
        -epoch "$epochs" -lr "$lr" -wordNgrams 2 -bucket 2000000 -loss softmax -thread 2 \
        -verbose 2 2>&1 | tr '\r' '\n' >"$out/ft.log"
      wall=$(echo "$(date +%s.%N) - $start" | bc)
      rate=$(grep -o 'words/sec/thread: *[0-9]*' "$out/ft.log" | tail -1 | grep -o '[0-9]*$')
      accuracy=$(fasttext test "$out/model.bin" "$split/test.lower" | sed -n 's/^P@1\t//p')
      printf '%-9s %5s %6s %9s %15s %8.1fs\n' fastText "$lr" "$epochs" "$accuracy" "$rate" "$wall"
      echo "$seed $lr $epochs fastText $accuracy $rate" >>"$out/results"

      rm -rf "$out/train_dir"
      start=$(date +%s.%N)
      "$BUILD/deploy/pstrain_local" --ps=2 --workers=2 --model=fasttext --data_dir="$split" \
        "${batch_flag[@]}" --epochs="$epochs" --learning_rate="$lr" \
        --train_dir="$out/train_dir" --http_port=-1 >"$out/pstrain.log" 2>&1
      wall=$(echo "$(date +%s.%N) - $start" | bc)
      final=$(grep -o 'final: step [0-9]*, test accuracy [0-9.]*.*' "$out/pstrain.log" | tail -1)
      accuracy=$(echo "$final" | grep -o 'test accuracy [0-9.]*' | grep -o '[0-9.]*$')
      read -r rate secs < <(pstrain_rate "$out/pstrain.log" $((tokens * epochs)))
      printf '%-9s %5s %6s %9s %15s %8.1fs   (%s s of training)\n' pstrain "$lr" "$epochs" \
        "$accuracy" "$rate" "$wall" "$secs"
      echo "          $final"
      echo "$seed $lr $epochs pstrain $accuracy $rate" >>"$out/results"
    done
  done
done

if ((ROUNDS > 1)); then
  echo "mean (min to max) of $ROUNDS rounds:"
  printf '%-5s %5s %6s %-9s %-26s %s\n' seed lr epochs run accuracy "words/s/thread"
  awk '{ k = $1 " " $2 " " $3 " " $4; n[k]++; a[k] += $5; r[k] += $6
         if (!(k in lo) || $5 < lo[k]) lo[k] = $5
         if (!(k in hi) || $5 > hi[k]) hi[k] = $5
         if (!(k in order)) order[k] = NR }
       END { for (k in n) {
               split(k, f, " ")
               printf "%d %-5s %5s %6s %-9s %.4f (%.4f to %.4f) %15.0f\n", order[k], f[1], f[2],
                      f[3], f[4], a[k] / n[k], lo[k], hi[k], r[k] / n[k] } }' "$out/results" |
    sort -n | cut -d' ' -f2-
fi
