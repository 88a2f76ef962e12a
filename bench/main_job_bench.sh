#!/usr/bin/env bash
# The main job beside PyTorch at the same evaluation cadence, taking turns:
# time to TARGET test accuracy (0.90) in seconds of training, and each
# side's step beside its own step in one process.
#
# pstrain: scripts/run_main_job.sh's job as bench/main_job.py runs it (1 chief, 2 ps tasks, 1 worker,
# mnist on Fashion-MNIST, asynchronous Nesterov momentum at 0.05, batch
# 128, 6 epochs), the chief evaluating the ps tasks' variables on all
# 10,000 test images every 10 s of training; "after T s of training" is
# when the evaluated variables were pulled. PyTorch: the same network,
# optimizer, batch and learning rate in one process
# (bench/peers/pytorch/train_fmnist.py --eval-secs 10), evaluating all
# 10,000 test images every 10 s of training with its training clock
# stopped meanwhile: its evaluation time is excluded, pstrain's is not.
#
# Round r seeds both sides with r (pstrain's initial values and input
# order, PyTorch's likewise): both curves hover around 0.90 for hundreds of
# steps, and each round is a draw of each side's seed.
#
# Each round also times the one-process step of each (mnist_step_bench just
# before and just after the job, bench_train.py) and the main job's worker
# step (its mean sec/batch over the whole run), and says where the main job's time went: the worker's
# step in its parts (its own counters: pull, compute, push, in ms) and the
# CPU seconds of each process and of the idle CPUs over the run
# (bench/task_cpu.py).
#
#   bash bench/main_job_bench.sh [BUILD_DIR]     # ROUNDS=2 TARGET=0.90
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
ROUNDS="${ROUNDS:-2}"
TARGET="${TARGET:-0.90}"
out="$(mktemp -d /tmp/pstrain_main_job_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash bench/install_bench_deps.sh >/dev/null
export OPENBLAS_CORETYPE=SkylakeX  # the peer's BLAS (bench/peers/pytorch/README.md)
echo "lscpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
  "$(lscpu | grep -o 'avx512[a-z_0-9]*' | sort -u | tr '\n' ' ')"
# The first evaluation at or above TARGET in a log of eval lines.
first_at_target() {
  grep -o 'eval: step [0-9]*, test accuracy [0-9.]* (10000 examples) after [0-9.]* s' "$1" |
    awk -v t="$TARGET" '$6 + 0 >= t {print $6 " at step " $3 " after " $10 " s"; exit}'
}
# The median one-process step of mnist_step_bench (100 steps).
local_step() {
  "$BUILD/bench/mnist_step_bench" --steps=100 2>/dev/null | tail -1 |
    python3 -c 'import json, sys; print("%.4f" % json.load(sys.stdin)["step_s"]["median"])'
}
for (( r = 1; r <= ROUNDS; r++ )); do
  before=$(local_step)
  rm -rf "$out/train"
  python3 bench/main_job.py run "$BUILD" "$out/train" "$r" >"$out/pstrain.log" 2>&1 &
  job=$!
  cpu=$(python3 bench/task_cpu.py "$job")
  wait "$job"
  # The machine's speed drifts from minute to minute: the job's step is
  # set beside the mean of the local step just before and just after it.
  after=$(local_step)
  local_step=$(python3 -c "print('%.4f' % (($before + $after) / 2))")
  job_step=$(python3 bench/main_job.py step "$out/pstrain.log")
  echo "round $r: pstrain: local step ${local_step} s ($before before, $after after)," \
    "main job's worker step ${job_step} s" \
    "($(python3 -c "print('%.3f' % ($job_step / $local_step))")x), first at or above $TARGET:" \
    "$(first_at_target "$out/pstrain.log"), $(grep -o 'final: .*' "$out/pstrain.log")"
  parts=$(python3 bench/main_job.py parts "$out/pstrain.log")
  echo "round $r: pstrain: the worker's step in ms: $parts; CPU seconds over the run: $cpu"
  torch_step=$(cd bench/peers/pytorch && /usr/bin/python3 bench_train.py --model mnist --batch 128 \
    --steps 100 2>/dev/null | tail -1 |
    python3 -c 'import json, sys; print("%.4f" % json.load(sys.stdin)["step_s"]["median"])')
  (cd bench/peers/pytorch && /usr/bin/python3 train_fmnist.py --lr 0.05 --epochs 6 --seed "$r" \
    --eval-secs 10 --target "$TARGET" >"$out/torch.log" 2>&1)
  torch_train=$(tail -1 "$out/torch.log" | python3 -c '
import json, sys
d = json.load(sys.stdin)
steps = sum(h["steps"] for h in d["history"])
print("%.4f s a step over %d steps, final %.4f" % (d["cum_train_s"][-1] / steps, steps,
                                                  d["history"][-1]["test_acc"]))')
  echo "round $r: PyTorch: one-process step ${torch_step} s, training ${torch_train}," \
    "first at or above $TARGET: $(first_at_target "$out/torch.log")"
done
