#!/usr/bin/env bash
# Starts pstrain_local N times (a job of 2 ps, 2 workers and a chief, a few
# steps each) on a busy machine: stress-ng keeps every CPU busy and another
# process binds random free ports all the while, the way other services on a
# shared host do. Prints each start's outcome and the count that started,
# trained and ended 0.
#   bash bench/launcher_starts.sh [N]     (default 50; needs stress-ng)
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-50}"
BUILD="${PSTRAIN_BUILD_DIR:-build}"
command -v stress-ng >/dev/null || bash scripts/apt_install.sh stress-ng
work="$(mktemp -d)"
cleanup() {
  kill "$stress" "$binder" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
stress-ng --cpu "$(nproc)" --timeout 3600 >/dev/null 2>&1 &
stress=$!
# Binds 64 ports at a time where the kernel hands out free ones, each held
# for a moment, as an unrelated server or client on the host would.
python3 - <<'PY' &
import random, socket, time
held = []
while True:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", random.randint(32768, 60999)))
        s.listen(1)
        held.append(s)
    except OSError:
        s.close()
    if len(held) > 64:
        held.pop(0).close()
    time.sleep(0.002)
PY
binder=$!
trap cleanup EXIT
ok=0
for i in $(seq 1 "$N"); do
  log="$work/start-$i.log"
  start=$(date +%s%N)
  if "$BUILD/deploy/pstrain_local" --ps=2 --workers=2 --model=mnist --max_steps=3 \
      --http_port=0 --save_summaries_steps=0 --train_dir="$work/train-$i" >"$log" 2>&1; then
    ok=$((ok + 1))
    outcome="ok"
  else
    outcome="FAILED (exit $?): $(grep -m1 -E 'cannot|failed|Error|error' "$log" || tail -1 "$log")"
  fi
  ms=$((($(date +%s%N) - start) / 1000000))
  printf 'start %d/%d: %s in %d.%03d s\n' "$i" "$N" "$outcome" $((ms / 1000)) $((ms % 1000))
done
echo "launcher_starts: $ok of $N starts ran their job to exit 0 (stress-ng --cpu $(nproc), random ports bound beside)"
[[ "$ok" == "$N" ]]
