#!/usr/bin/env bash
# The measured points of docs/SCALE.md: scale_bench's sweeps into one CSV,
# then the plot of them (bench/scale/plot_scale.py, python3-matplotlib from
# bench/install_bench_deps.sh).
#
#   bash bench/scale/run_scale_model.sh [OUT_DIR]     # default: build/scale
#
# Takes about 25 minutes on 2 cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BENCH="$ROOT/build/bench/scale_bench"
OUT=${1:-$ROOT/build/scale}
mkdir -p "$OUT"
CSV="$OUT/points.csv"
rm -f "$CSV"
run() { echo "+ scale_bench $*"; "$BENCH" --csv="$CSV" "$@" 2>/dev/null; }

lscpu | grep -E "^Model name|^CPU\(s\)|^Flags" | cut -c1-200
# What a ps pays per worker and per push as W grows (one ps).
run --ps_list=1 --workers_list=10,100,1000 --seconds=10
# ... and as P grows (100 workers, each pushing to every ps).
run --ps_list=4,16 --workers_list=100 --seconds=10
# The sync step of a null model (no computing), TensorFlow's measurement.
run --ps_list=16 --workers_list=1,10,100 --sync --compute_ms=0 --seconds=10
# Waits at the sync step: one ps, up to 2,000 workers, both transports.
run --ps_list=1 --workers_list=100,1000,2000 --sync --compute_ms=0 --seconds=10
run --ps_list=1 --workers_list=100,1000,2000 --sync --compute_ms=0 --seconds=10 --transport=grpc
# What an idle worker costs a ps: each pulls once, then waits a minute.
run --ps_list=1 --workers_list=10,100,1000 --compute_ms=60000 --seconds=5
# Embedding rows from many workers (one ps): each step also pulls and
# pushes the rows of 1,024 ids drawn by a power law over 10^7 rows.
run --ps_list=1 --workers_list=10,100,1000 --seconds=10 --rows=10000000
# A thousand workers on 16 ps tasks, stepping every 10 s, async and sync.
run --ps_list=16 --workers_list=1000 --compute_ms=10000 --seconds=20
run --ps_list=16 --workers_list=1000 --compute_ms=10000 --seconds=20 --sync
/usr/bin/python3 "$ROOT/bench/scale/plot_scale.py" "$CSV" "$OUT/scale.png"
