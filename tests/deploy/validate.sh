#!/usr/bin/env bash
# Checks the deployment files offline with validate.py:
#   - deploy/compose/docker-compose.yml against the Compose Specification,
#   - deploy/kubernetes/tfjob.yaml against the TFJob CRD's openAPIV3Schema,
#     with the schemas in tests/deploy/schemas,
#   - every TF_CONFIG in the compose file against its services,
#   - the TFJob's replicas, containers and probes, and its claim in pvc.yaml,
#   - the GPU and TLS kustomizations (gpu/, tls/): their patches applied to
#     the TFJob, the result against the CRD and what each overlay promises.
# Installs Debian's python3-jsonschema and python3-yaml first when missing
# (scripts/apt_install.sh; no apt work once they are there) and runs Debian's
# own interpreter, which has them: the python3 on PATH may not.
# Arguments go to validate.py (--compose, --tfjob, --pvc, --gpu_overlay,
# --tls_overlay: other files).
# Exits 1 if a check fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

bash "$repo/scripts/apt_install.sh" python3-jsonschema python3-yaml
exec /usr/bin/python3 "$here/validate.py" "$@"
