#!/usr/bin/env bash
# The main job: a local cluster (1 chief, 2 ps, 2 workers, each its own
# process, gRPC on loopback) trains the mnist network on Fashion-MNIST and
# prints its test accuracy. Installs and builds what it needs first.
# Extra arguments go to the launcher (and from it to every task).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
exec build/deploy/pstrain_local --ps=2 --workers=2 --model=mnist --epochs=12 \
  --train_dir=runs/mnist "$@"
