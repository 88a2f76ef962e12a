#!/usr/bin/env bash
# Installs TensorFlow (tensorflow-cpu from PyPI), TensorBoard, onnx and
# onnxruntime into a virtual environment of their own, for the cross-checks
# in this folder. Not needed to build, test or run pstrain. Idempotent: an
# environment that already imports them all is kept.
#
# The environment: $PSTRAIN_TF_VENV, by default /opt/pstrain/tf-venv.
set -euo pipefail

VENV="${PSTRAIN_TF_VENV:-/opt/pstrain/tf-venv}"
if "$VENV/bin/python" -c "import tensorflow, tf_keras, tensorboard, onnx, onnxruntime" 2>/dev/null; then
  exit 0
fi
PYTHON="${PYTHON:-python3}"
"$PYTHON" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet tensorflow-cpu tf_keras tensorboard numpy onnx onnxruntime
"$VENV/bin/python" -c "import tensorflow as tf; print('tensorflow', tf.__version__)"
