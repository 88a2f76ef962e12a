#!/usr/bin/env bash
# The data-plane table of docs/BENCHMARKS.md in one go: pstrain's transfer
# paths (the worker's arena, a connection's region, the channel's socket
# alone, gRPC), ps-lite (bench/pslite/README.md; its checkout under
# PSLITE, never committed) and iperf3 over loopback, one after the other,
# then 4.28 MB alone three times, taking turns.
#   bash bench/run_data_plane_bench.sh [PSLITE_DIR]     (default /tmp/ps-lite; PSTRAIN_BUILD_DIR: build)
set -euo pipefail
cd "$(dirname "$0")/.."
PSLITE="${1:-/tmp/ps-lite}"
BENCH="${PSTRAIN_BUILD_DIR:-build}/bench/transfer_bench"
date -u
echo "== arena"; "$BENCH" --seconds=2
echo "== region"; "$BENCH" --seconds=2 --arena=false
echo "== socket"; "$BENCH" --seconds=2 --shared_memory=false
echo "== grpc"; "$BENCH" --seconds=2 --transport=grpc
echo "== ps-lite"; bash bench/pslite/run_pslite_bench.sh "$PSLITE" 2>&1 | grep "^|"
echo "== iperf3"
iperf3 -s -1 -p 5299 >/dev/null 2>&1 &
sleep 1
iperf3 -c 127.0.0.1 -p 5299 -t 5 -V 2>&1 | grep -E "sender|receiver|CPU Util" | tail -3
for turn in 1 2 3; do
  echo "== turn $turn: arena, socket, ps-lite"
  "$BENCH" --seconds=2 --sizes=4280K | tail -1
  "$BENCH" --seconds=2 --sizes=4280K --shared_memory=false | tail -1
  bash bench/pslite/run_pslite_bench.sh "$PSLITE" 2>&1 | grep "^| 4382720"
done
date -u
