#!/usr/bin/env bash
# The main job: a local cluster (1 chief, 2 ps, 1 worker, each its own
# process, gRPC and the tensor channel on loopback) trains the mnist network
# on Fashion-MNIST for 6 epochs, asynchronous Nesterov momentum at lr 0.05,
# reporting test accuracy every 10 s of training and at the end. One worker
# because two cores are all this machine has: a second worker shares them
# and, asynchronous at this rate, diverges (two ended at 0.10 test accuracy).
# Installs and builds what it needs first.
# Extra arguments go to the launcher (and from it to every task).
#
# Each run trains from scratch in a train dir of its own, runs/mnist-TIME: a
# chief restores from the checkpoints in its train dir, so reusing one would
# carry on from the last run. To carry on on purpose, pass --train_dir=DIR
# (the last flag wins).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
train_dir="runs/mnist-$(date -u +%Y%m%d-%H%M%S)"
exec build/deploy/pstrain_local --ps=2 --workers=1 --model=mnist --learning_rate=0.05 --epochs=6 \
  --eval_secs=10 --train_dir="$train_dir" "$@"
