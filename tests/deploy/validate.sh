#!/usr/bin/env bash
# Checks the deployment files offline (needs node and npm; the npm registry
# only on the first run):
#   - deploy/compose/docker-compose.yml against the Compose Specification,
#   - deploy/kubernetes/tfjob.yaml against the TFJob CRD's openAPIV3Schema,
#     with the schemas in ../shared/schemas (relative to the repository root),
#   - every TF_CONFIG in the compose file against its services.
# Installs ajv and js-yaml (the exact versions of package-lock.json) into
# tests/deploy/node_modules first, only when they are missing or stale.
# Not part of ctest: CI may not reach the npm registry.
set -euo pipefail
cd "$(dirname "$0")"

if ! npm ls --silent >/dev/null 2>&1; then
  npm ci --no-audit --no-fund --silent
fi
status=0
node validate.js || status=1

exit "$status"
