#!/usr/bin/env bash
# Cross-checks pstrain against TensorFlow itself (crosscheck.py says what):
# installs TensorFlow into its own virtual environment (install_tf.sh), builds
# pstrain with the dump tool, and runs the checks. Exits 1 if any check fails.
# Outside ctest: TensorFlow is large and not a dependency of the build.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/install_deps.sh
bash tests/tensorflow/install_tf.sh
bash scripts/build.sh  # builds tests/crosscheck_dump too
exec "${PSTRAIN_TF_VENV:-/opt/pstrain/tf-venv}/bin/python" tests/tensorflow/crosscheck.py \
  --build "${PSTRAIN_BUILD_DIR:-build}" "$@"
