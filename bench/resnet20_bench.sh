#!/usr/bin/env bash
# pstrain's resnet20 beside PyTorch's same network and recipe
# (bench/resnet20_torch.py), taking turns, on the CIFAR-layout Fashion-MNIST
# (pstrain_fmnist_to_cifar: 50,000 training images, 10,000 test). pstrain:
# pstrain_local with 1 ps and 1 worker (its compute threads: the machine's
# cores); PyTorch (Debian's python3-torch) on as many threads. Both train
# EPOCHS epochs of batches of 128 at the recipe's settings and report test
# accuracy; pstrain's step time is its worker's mean sec/batch over the
# logged steps, PyTorch's the mean of its forward, backward and update.
# Then TensorFlow's step of the same network on random batches, where the
# project's TensorFlow venv is installed (tests/tensorflow/install_tf.sh).
#
#   bash bench/resnet20_bench.sh [BUILD_DIR]     # EPOCHS=2 ROUNDS=1
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
EPOCHS="${EPOCHS:-2}"
ROUNDS="${ROUNDS:-1}"
data=datasets/fmnist-cifar
out="$(mktemp -d /tmp/pstrain_resnet20_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash scripts/apt_install.sh python3-torch dataset-fashion-mnist >/dev/null
[[ -f "$data/cifar-10-batches-bin/test_batch.bin" ]] ||
  "$BUILD/tools/pstrain_fmnist_to_cifar" --output_dir="$data" >/dev/null
echo "lscpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
  "$(lscpu | grep -o 'avx512[a-z_0-9]*' | sort -u | tr '\n' ' ')"
for (( r = 1; r <= ROUNDS; r++ )); do
  rm -rf "$out/train"
  start=$(date +%s)
  "$BUILD/deploy/pstrain_local" --ps=1 --workers=1 --model=resnet20 --data_dir="$data" \
    --epochs="$EPOCHS" --seed="$r" --log_frequency=50 --train_dir="$out/train" --http_port=-1 \
    >"$out/log" 2>&1
  step=$(grep -o '[0-9.]* sec/batch' "$out/log" | awk '{s += $1; n++} END {printf "%.3f", s / n}')
  echo "pstrain round $r: $(($(date +%s) - start)) s in all, step ${step} s," \
    "$(grep -o 'final: .*' "$out/log")"
  start=$(date +%s)
  /usr/bin/python3 bench/resnet20_torch.py --data_dir="$data" --epochs="$EPOCHS" \
    --threads="$(nproc)" --seed="$r" | tail -1 | sed "s/^/round $r: /"
  echo "  ($(($(date +%s) - start)) s in all)"
done
# TensorFlow's step of the same network (bench/peers/keras/resnet20.py), in
# the project's TensorFlow venv where it is installed.
TF_PYTHON="${PSTRAIN_TF_VENV:-/opt/pstrain/tf-venv}/bin/python"
if [[ -x "$TF_PYTHON" ]]; then
  "$TF_PYTHON" bench/peers/keras/resnet20.py --threads="$(nproc)" 2>/dev/null | tail -1
fi
