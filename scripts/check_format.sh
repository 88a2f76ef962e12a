#!/bin/bash
# Fails, listing them, when C++ or CUDA sources differ from what clang-format
# (.clang-format) makes of them. Fix with:
#   git ls-files '*.cc' '*.h' '*.cu' | xargs clang-format -i
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/apt_install.sh clang-format >/dev/null
bad=()
while IFS= read -r f; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
if (( ${#bad[@]} > 0 )); then
  echo "not formatted (clang-format $(clang-format --version | grep -o '[0-9][0-9.]*' | head -1)):"
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "every C++ and CUDA source is formatted"
