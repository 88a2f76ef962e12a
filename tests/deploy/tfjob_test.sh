#!/usr/bin/env bash
# Runs deploy/kubernetes/tfjob.yaml's pods under Docker as Kubeflow's training
# operator and a kubelet would (tests/deploy/tfjob_pods.py): TF_CONFIG and
# the services' host names, the manifest's image, args, env, ports, probes,
# security context and claim, restartPolicy ExitCode. The job trains mnist
# to completion (final test accuracy at least 0.90), and its ps-0 pod,
# deleted once global_step reaches 300, exits 143, is recreated and restored
# by the chief.
#
#   bash tests/deploy/tfjob_test.sh     # as root; about 10 minutes
#
# Needs a Docker engine as compose_test.sh does (tests/deploy/docker_engine.sh:
# installs, starts and builds what is missing); exits 77 (ctest: skipped),
# naming why, where none can run; 1 when a check fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="$(mktemp -d /tmp/pstrain_tfjob_test.XXXXXX)"
log() { echo "tfjob_test: $(date +%T) $*"; }
# shellcheck source=tests/deploy/docker_engine.sh
source "$here/docker_engine.sh"
on_exit "rm -rf '$work'"

docker_engine_up
bash "$repo/scripts/apt_install.sh" python3-jsonschema python3-yaml
/usr/bin/python3 "$here/tfjob_pods.py" --delete_pod=ps-0 --delete_at_step=300 --min_accuracy=0.90
