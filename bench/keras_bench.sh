#!/usr/bin/env bash
# A Keras model trained by pstrain from its JSON beside Keras training it
# itself, taking turns: bench/peers/keras/residual.py's Functional model
# (a residual block with batch norm) on Fashion-MNIST, both at Keras's
# recipe (Adam at 0.001, batches of 128, EPOCHS epochs, images as
# pixel / 255 - 0.5). pstrain: pstrain_local with 1 ps and 1 worker, the
# model given as --model=keras:FILE.json; Keras: model.fit in the project's
# TensorFlow venv (tests/tensorflow/install_tf.sh) on as many threads as
# the machine has. Prints each run's test accuracy and seconds a step
# (pstrain: its worker's mean sec/batch over the logged steps; Keras: the
# mean of its train steps after the first 20).
#
#   bash bench/keras_bench.sh [BUILD_DIR]     # EPOCHS=3 ROUNDS=1
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${1:-build}"
EPOCHS="${EPOCHS:-3}"
ROUNDS="${ROUNDS:-1}"
PYTHON="${PSTRAIN_TF_VENV:-/opt/pstrain/tf-venv}/bin/python"
out="$(mktemp -d /tmp/pstrain_keras_bench.XXXXXX)"
trap 'rm -rf "$out"' EXIT
bash tests/tensorflow/install_tf.sh
bash scripts/apt_install.sh dataset-fashion-mnist >/dev/null
"$PYTHON" bench/peers/keras/residual.py --write_json="$out/residual.json" 2>/dev/null
echo "lscpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs," \
  "$(lscpu | grep -o 'avx512[a-z_0-9]*' | sort -u | tr '\n' ' ')"
for (( r = 1; r <= ROUNDS; r++ )); do
  rm -rf "$out/train"
  start=$(date +%s)
  "$BUILD/deploy/pstrain_local" --ps=1 --workers=1 --model="keras:$out/residual.json" \
    --optimizer=Adam --learning_rate=0.001 --batch_size=128 --epochs="$EPOCHS" \
    --seed="$r" --log_frequency=50 --train_dir="$out/train" --http_port=-1 >"$out/log" 2>&1
  step=$(grep -o '[0-9.]* sec/batch' "$out/log" | awk '{s += $1; n++} END {printf "%.3f", s / n}')
  echo "round $r: pstrain: $(($(date +%s) - start)) s in all, step ${step} s," \
    "$(grep -o 'final: .*' "$out/log")"
  "$PYTHON" bench/peers/keras/residual.py --epochs="$EPOCHS" --threads="$(nproc)" --seed="$r" \
    2>/dev/null | tail -1 | sed "s/^/round $r: /"
done
