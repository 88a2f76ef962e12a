#!/usr/bin/env bash
# A real job (1 ps, 1 worker, 1 chief: mnist for STEPS steps) quiet, then
# again with its ps's tensor channel flooded from the start of training by
# channel_flood_bench --flood_port (1,000 idle connections, 20 slow
# senders): the worker's examples/sec from its progress lines, median of
# each run.
#   bash bench/flood_during_training.sh [STEPS]     (default 1500)
set -euo pipefail
cd "$(dirname "$0")/.."
STEPS="${1:-1500}"
BUILD="${PSTRAIN_BUILD_DIR:-build}"
median() { sort -n | awk '{a[NR]=$1} END {print (NR ? a[int((NR+1)/2)] : "none")}'; }
run() {
  local log="$1" flood="$2"
  "$BUILD/deploy/pstrain_local" --ps=1 --workers=1 --model=mnist --epochs=0 \
    --max_steps="$STEPS" --http_port=-1 --log_frequency=50 --save_checkpoint_secs=0 \
    --save_summaries_steps=0 --train_dir="$(mktemp -d)" >"$log" 2>&1 &
  local job=$!
  if [[ "$flood" == yes ]]; then
    local port=""
    until [[ -n "$port" ]]; do
      port=$(grep -o "tensor channel on port [0-9]*" "$log" | head -1 | grep -o "[0-9]*$" || true)
      kill -0 "$job" 2>/dev/null || break
      sleep 0.2
    done
    "$BUILD/bench/channel_flood_bench" --flood_port="$port" --seconds=600 >"$log.flood" 2>&1 &
    local flooder=$!
  fi
  wait "$job"
  if [[ "$flood" == yes ]]; then kill "$flooder" 2>/dev/null || true; fi
  grep "\[worker:0\]" "$log" | grep -o "([0-9.]* examples/sec" | grep -o "[0-9.]*" | tail -n +3 | median
}
date -u
echo "quiet:   $(run /tmp/flood_quiet.log no) examples/sec (median of the worker's progress lines)"
echo "flooded: $(run /tmp/flood_flooded.log yes) examples/sec"
grep -c "tensor channel: closed the connection" /tmp/flood_flooded.log | sed 's/^/ps lines on slow senders cut off: /'
grep "final:" /tmp/flood_quiet.log /tmp/flood_flooded.log | sed 's/.*\(final:.*\)/\1/'
date -u
