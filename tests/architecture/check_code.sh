#!/bin/bash
# Two habits of the code (docs/DEVELOPMENT.md) that a reviewer would
# otherwise have to catch:
#   1. configuration is parsed once: no FLAGS_ read in ps/, worker/,
#      chief/, nn/, data/, core/, cluster/ or export/ outside a main
#      (*main.cc) or a flags file (*_flags.cc, *_flags.h); tests are free
#      to set flags;
#   2. no function in ps/, worker/ or chief/ runs past 60 lines unless the
#      comment at its top says why, on a line beginning "// Long:";
#   3. docs/ARCHITECTURE.md's table of folders names (in its first column)
#      every library CMake builds (add_library of a pstrain_ name), and
#      none it does not.
# Usage: check_code.sh SOURCE_DIR
set -u
cd "${1:?SOURCE_DIR}" || exit 2
failed=0

# 1.
while IFS= read -r hit; do
  echo "FAIL: a flag read outside a main or a flags file: $hit"
  failed=1
done < <(grep -rn --include='*.cc' --include='*.h' 'FLAGS_[a-z]' \
           ps worker chief nn data core cluster export |
         grep -Ev '^[^:]*(main\.cc|_flags\.(cc|h)|_test\.cc|/testing/[^:]*):')

# 2. A function opens with a line ending in "{" that is its signature at
# column 0, or continues one; it closes with "}" at column 0.
long_functions='
  FNR == 1 { start = 0; sig = 0; comment = "" }
  start == 0 && /^(namespace|extern|struct|class|enum|union|template|#|\/\/|using|typedef)/ {
    if ($0 ~ /^\/\//) comment = comment "\n" $0; else comment = ""
    sig = 0
    next
  }
  start == 0 && /^[A-Za-z_]/ { sig = FNR; sig_line = $0; sig_comment = comment; comment = "" }
  start == 0 && sig > 0 && /\{[[:space:]]*$/ { start = sig; why = sig_comment; next }
  start == 0 && /^$/ { sig = 0; comment = "" }
  start > 0 && /^\}/ {
    if (FNR - start > 60 && why !~ /\/\/ Long:/) {
      printf "%s:%d: %d lines: %s\n", FILENAME, start, FNR - start, sig_line
    }
    start = 0; sig = 0; comment = ""
  }'
while IFS= read -r hit; do
  echo "FAIL: a function over 60 lines without a reason (\"// Long:\") at its top: $hit"
  failed=1
done < <(find ps worker chief -name '*.cc' ! -name '*_test.cc' -print0 | sort -z |
         xargs -0 awk "$long_functions")

# 3.
built=$(grep -rhoE --include=CMakeLists.txt 'add_library\(pstrain_[a-z0-9_]+' . |
        grep -v '^./build' | sed 's/add_library(//' | sort -u)
named=$(grep -E '^\| `' docs/ARCHITECTURE.md | awk -F'|' '{print $2}' |
        grep -oE '`pstrain_[a-z0-9_]+`' | tr -d '`' | sort -u)
while IFS= read -r lib; do
  [[ -n $lib ]] && { echo "FAIL: docs/ARCHITECTURE.md's table does not name $lib"; failed=1; }
done < <(comm -23 <(echo "$built") <(echo "$named"))
while IFS= read -r lib; do
  [[ -n $lib ]] && { echo "FAIL: docs/ARCHITECTURE.md names $lib, which no CMakeLists builds"; failed=1; }
done < <(comm -13 <(echo "$built") <(echo "$named"))

if (( failed )); then
  echo "see docs/DEVELOPMENT.md: flags are read in mains, functions stay short or say why;"
  echo "docs/ARCHITECTURE.md names the libraries CMake builds"
  exit 1
fi
echo "flags are read only in mains and flags files; every long function says why;" \
  "docs/ARCHITECTURE.md names every library"
