#!/usr/bin/env bash
# cifar10 as its tutorial trains it, as a user runs it: Fashion-MNIST written in the
# CIFAR-10 binary layout, a cluster from TF_CONFIG alone (1 chief, 2 ps,
# 2 workers), --model=cifar10 with its recipe (TF's distortions, a 20,000
# example shuffle buffer, gradient descent at 0.1, moving averages 0.9999).
# After TRAIN_SECS (default 1200) of training a SIGTERM makes the chief save
# a checkpoint, and `evaluator --run_once` measures it on the moving
# averages. Prints the evaluator's line and the steps reached.
#
#   bash tests/scenarios/cifar10_fmnist.sh [BUILD_DIR] [extra task flags]
# Logs go to $OUT (default /tmp/pstrain_cifar10_fmnist).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
shift || true
OUT="${OUT:-/tmp/pstrain_cifar10_fmnist}"
TRAIN_SECS="${TRAIN_SECS:-1200}"
rm -rf "$OUT" && mkdir -p "$OUT"

"$BUILD/tools/pstrain_fmnist_to_cifar" --output_dir="$OUT/data" >"$OUT/convert.log" 2>&1 || {
  cat "$OUT/convert.log"; exit 1; }

source tests/scenarios/tf_config_tasks.sh
make_cluster 2
flags=(--model=cifar10 --data_dir="$OUT/data" --epochs=0 --train_dir="$OUT/train" --http_port=-1 "$@")
# Each task sizes its compute threads itself: the two workers split the
# cores, as they do under pstrain_local.
start_cluster 2

# Training time counts from the workers' first step.
until grep -q "model is ready" "$OUT/worker-0.log" 2>/dev/null; do sleep 1; done
sleep "$TRAIN_SECS"
kill -TERM "${pids[chief:0]}"
wait "${pids[chief:0]}"
for t in worker:0 worker:1 ps:0 ps:1; do kill -TERM "${pids[$t]}" 2>/dev/null; done
wait
grep -h "saved checkpoint" "$OUT/chief-0.log" | tail -1
grep -h "step [0-9]*, loss" "$OUT"/worker-0.log | tail -1
"$BUILD/chief/evaluator" --model=cifar10 --data_dir="$OUT/data" --train_dir="$OUT/train" \
  --run_once 2>&1 | grep -E "eval:|Error|error"
