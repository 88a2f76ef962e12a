#!/usr/bin/env bash
# Looks at the chief's status page in headless Chromium: builds and starts
# status_page_demo (a made-up run: 2 ps, 2 workers, one dead, 200 loss
# points), takes a screenshot, dumps the DOM after the page's script has run
# and fetched /status, and checks the task table and the loss plot are there.
#
#   tests/browser/check_status_page.sh [OUT_DIR]
#
# OUT_DIR (default BUILD_DIR/browser) receives status_page.png and
# status_page.dom.html. BUILD_DIR defaults to build-http; JOBS to 1.
# Installs Debian's chromium if it is missing (needs root or sudo).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-http}
OUT_DIR=${1:-$BUILD_DIR/browser}
mkdir -p "$OUT_DIR"

bash "$ROOT/scripts/apt_install.sh" chromium fonts-dejavu-core

cmake -S "$ROOT" -B "$BUILD_DIR" >/dev/null
cmake --build "$BUILD_DIR" --target status_page_demo -j"${JOBS:-1}" >/dev/null

WORK=$(mktemp -d)
DEMO_PID=""
cleanup() {
  if [ -n "$DEMO_PID" ]; then kill "$DEMO_PID" 2>/dev/null || true; wait "$DEMO_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

"$BUILD_DIR/tests/status_page_demo" --port=0 --port_file="$WORK/port" >"$WORK/demo.log" 2>&1 &
DEMO_PID=$!
for _ in $(seq 100); do
  [ -s "$WORK/port" ] && break
  sleep 0.1
done
[ -s "$WORK/port" ] || { echo "check_status_page: the demo did not start:" >&2; cat "$WORK/demo.log" >&2; exit 1; }
URL="http://127.0.0.1:$(cat "$WORK/port")/"
echo "check_status_page: $URL"

chrome() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$(mktemp -d -p "$WORK")" \
    --window-size=1280,900 --virtual-time-budget=3000 "$@" "$URL" 2>>"$WORK/chromium.log"
}
chrome --screenshot="$OUT_DIR/status_page.png" >/dev/null
chrome --dump-dom >"$OUT_DIR/status_page.dom.html"

DOM="$OUT_DIR/status_page.dom.html"
fail() { echo "check_status_page: FAIL: $*" >&2; exit 1; }
[ -s "$OUT_DIR/status_page.png" ] || fail "no screenshot"
rows=$(grep -o '<tr class="task state-[a-z]*"' "$DOM" | wc -l)
[ "$rows" -eq 4 ] || fail "the task table has $rows rows, expected 4"
grep -q '<tr class="task state-dead"><td class="name">worker:1</td>' "$DOM" || fail "worker:1 is not shown dead"
points=$(grep -o 'data-plot-points="[0-9]*"' "$DOM" | grep -o '[0-9]*' || echo 0)
[ "$points" -ge 200 ] || fail "the plot drew $points points, expected at least 200"
grep -q 'id="loss-raw" class="raw" d="M' "$DOM" || fail "no raw loss line"
grep -q 'id="loss-smooth" class="smooth" d="M' "$DOM" || fail "no smoothed loss line"
grep -q 'data-live="yes"' "$DOM" || fail "the page did not reach /status"
grep -q 'live · updated' "$DOM" || fail "the page never refreshed from /status"
echo "check_status_page: OK ($rows tasks, $points loss points; screenshot $OUT_DIR/status_page.png)"
