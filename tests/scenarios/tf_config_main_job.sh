#!/usr/bin/env bash
# The two-worker recipe (the README's main job until 2026-11-25) started as
# Kubeflow starts it: 1 chief, 2 ps and 2 workers, each its own process with
# nothing but TF_CONFIG (no launcher, no OMP_NUM_THREADS), on this one
# machine. Each task must size its compute threads itself; the wall time is
# to be compared with the launcher's (`bash scripts/run_main_job.sh
# --workers=2 --learning_rate=0.01 --epochs=12`). Prints each task's exit code, the wall
# time and the chief's final line; exits 0 when every task exited 0.
#
#   bash tests/scenarios/tf_config_main_job.sh [BUILD_DIR] [extra task flags]
# Logs go to $OUT (default /tmp/pstrain_tf_config_main_job).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
shift || true
OUT="${OUT:-/tmp/pstrain_tf_config_main_job}"
LIMIT_SECS="${LIMIT_SECS:-1800}"
rm -rf "$OUT" && mkdir -p "$OUT"
unset OMP_NUM_THREADS

source tests/scenarios/tf_config_tasks.sh
make_cluster 2
# The two-worker recipe: 12 epochs at the model's default rate (0.01).
flags=(--model=mnist --epochs=12 --train_dir="$OUT/train" --http_port=-1 "$@")

begin=$(date +%s)
start_cluster 2

status=0
wait_for_tasks
echo "wall time: $(( $(date +%s) - begin )) s"
grep -h "computes on" "$OUT"/worker-*.log "$OUT/chief-0.log" | sed 's/.*\] //'
grep -h "final:" "$OUT/chief-0.log" | sed 's/.*\] //' || { echo "no final line"; status=1; }
exit $status
