#!/usr/bin/env bash
# The end of sync training when workers finish at different times, as a user runs it:
# a cluster started from TF_CONFIG alone (no launcher), 1 chief, 2 ps and
# 3 workers, sync replicas with 2 of 3 gradients per step, each worker
# --epochs=3. Workers finish their shards at different steps; the job must
# end by itself. Prints each task's exit code and the chief's final line;
# exits 0 when every task exited 0 within the time limit.
#
#   bash tests/scenarios/sync_uneven_finish.sh [BUILD_DIR] [extra task flags]
# Logs go to $OUT (default /tmp/pstrain_sync_uneven).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
shift || true
OUT="${OUT:-/tmp/pstrain_sync_uneven}"
LIMIT_SECS="${LIMIT_SECS:-1800}"
rm -rf "$OUT" && mkdir -p "$OUT"

source tests/scenarios/tf_config_tasks.sh
make_cluster 3
flags=(--sync_replicas --replicas_to_aggregate=2 --total_num_replicas=3 --epochs=3
       --train_dir="$OUT/train" --http_port=-1 "$@")

begin=$(date +%s)
start_cluster 3

status=0
wait_for_tasks
echo "wall time: $(( $(date +%s) - begin )) s"
grep -h "can still push\|training ends" "$OUT/chief-0.log" | sed 's/^/chief: /'
grep -h "done after" "$OUT"/worker-*.log
grep -h "final:" "$OUT/chief-0.log" || { echo "no final line"; status=1; }
exit $status
