#!/usr/bin/env bash
# The README's main job started as Kubeflow starts it: 1 chief, 2 ps and 2
# workers, each its own process with nothing but TF_CONFIG (no launcher, no
# OMP_NUM_THREADS), on this one machine. Each task must size its compute
# threads itself; the wall time is to be compared with the launcher's
# (`bash scripts/run_main_job.sh`). Prints each task's exit code, the wall
# time and the chief's final line; exits 0 when every task exited 0.
#
#   bash tests/scenarios/tf_config_main_job.sh [BUILD_DIR] [extra task flags]
# Logs go to $OUT (default /tmp/pstrain_tf_config_main_job).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
shift || true
OUT="${OUT:-/tmp/pstrain_tf_config_main_job}"
LIMIT_SECS="${LIMIT_SECS:-1800}"
rm -rf "$OUT" && mkdir -p "$OUT"
unset OMP_NUM_THREADS

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
c0=$(free_port); p0=$(free_port); p1=$(free_port); w0=$(free_port); w1=$(free_port)
cluster="{\"chief\":[\"127.0.0.1:$c0\"],\"ps\":[\"127.0.0.1:$p0\",\"127.0.0.1:$p1\"],\"worker\":[\"127.0.0.1:$w0\",\"127.0.0.1:$w1\"]}"
# The main job's recipe (scripts/run_main_job.sh).
flags=(--model=mnist --epochs=12 --train_dir="$OUT/train" --http_port=-1 "$@")

# Every task gets every flag; each ignores those it does not define.
undefok=$(printf '%s\n' "${flags[@]}" | sed -n 's/^--\([a-z_0-9]*\).*/\1/p' | paste -sd, -)
declare -A pids
start() {  # start TYPE INDEX BINARY
  TF_CONFIG="{\"cluster\":$cluster,\"task\":{\"type\":\"$1\",\"index\":$2}}" \
    "$BUILD/$3" "${flags[@]}" --undefok="$undefok" \
    >"$OUT/$1-$2.log" 2>&1 &
  pids["$1:$2"]=$!
}
begin=$(date +%s)
start ps 0 ps/ps_server
start ps 1 ps/ps_server
start chief 0 chief/chief
for w in 0 1; do start worker $w worker/worker; done

status=0
for task in "${!pids[@]}"; do
  pid=${pids[$task]}
  while kill -0 "$pid" 2>/dev/null && (( $(date +%s) - begin < LIMIT_SECS )); do sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$task still running after ${LIMIT_SECS} s"
    status=1
    continue
  fi
  wait "$pid"; rc=$?
  echo "$task exited $rc"
  (( rc == 0 )) || status=1
done
kill $(jobs -p) 2>/dev/null
echo "wall time: $(( $(date +%s) - begin )) s"
grep -h "computes on" "$OUT"/worker-*.log "$OUT/chief-0.log" | sed 's/.*\] //'
grep -h "final:" "$OUT/chief-0.log" | sed 's/.*\] //' || { echo "no final line"; status=1; }
exit $status
