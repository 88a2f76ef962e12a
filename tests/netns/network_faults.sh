#!/usr/bin/env bash
# network_faults.sh BUILD_DIR SCENARIO: a cluster with every task in a
# network namespace of its own, linked through veth pairs to a bridge in a
# hub namespace (10.231.0.0/24), and a network fault:
#   delay_loss  20 ms of delay and 1% loss on every link (tc netem): async
#               training completes.
#   ps_cut      ps:1's link down for 30 s in the middle of training, then up:
#               the worker waits with back-off and logs it, and the run
#               completes with nothing lost (no ps restarted or restored,
#               global_step reaches max_steps).
#   worker_cut  sync replicas, 2 of 3 workers aggregated: worker:2's link
#               down for good; the chief declares it dead and the steps go
#               on with the other two to the end.
# Needs root and the ip command; exits 77 (ctest: skipped), saying why, where
# namespaces cannot be made, and delay_loss where the kernel has no netem.
set -euo pipefail
build="$(cd "${1:?build dir}" && pwd)"
scenario="${2:?delay_loss, ps_cut or worker_cut}"
tag="pst$$"
hub="$tag-hub"
work="$(mktemp -d)"
namespaces=()

skip() { echo "SKIPPED: $*"; exit 77; }
fail() {
  echo "FAILED: $*"
  for f in "$work"/*.log; do echo "---- $(basename "$f") (last lines)"; tail -15 "$f"; done
  exit 1
}
cleanup() {
  for pid in $(jobs -p); do kill -9 "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for ns in "${namespaces[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  [ -n "${KEEP_WORK:-}" ] && echo "kept $work" || rm -rf "$work"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip >/dev/null || skip "no ip command (iproute2)"
ip netns add "$hub" 2>"$work/err" || skip "cannot make a network namespace: $(cat "$work/err")"
namespaces+=("$hub")
ip -n "$hub" link add br0 type bridge 2>"$work/err" || skip "cannot make a bridge: $(cat "$work/err")"
ip -n "$hub" link set br0 up
ip -n "$hub" link set lo up

# task NAME LAST_OCTET: a namespace for the task, its veth to the bridge.
task_ns() { echo "$tag-$1"; }
add_task() {
  local name="$1" octet="$2" ns
  ns="$(task_ns "$name")"
  ip netns add "$ns"
  namespaces+=("$ns")
  ip link add "v$octet-$tag" type veth peer name "h$octet-$tag"
  ip link set "v$octet-$tag" netns "$ns"
  ip link set "h$octet-$tag" netns "$hub"
  ip -n "$ns" link set "v$octet-$tag" name eth0
  ip -n "$ns" addr add "10.231.0.$octet/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  ip -n "$hub" link set "h$octet-$tag" master br0
  ip -n "$hub" link set "h$octet-$tag" up
}
# The hub's side of a task's link: what a cut takes down.
hub_port() { echo "h$1-$tag"; }

netem_all() {
  local octet
  for octet in "$@"; do
    tc -n "$hub" qdisc add dev "$(hub_port "$octet")" root netem delay 20ms loss 1% 2>"$work/err" ||
      skip "tc netem is not available here ($(cat "$work/err")): the kernel has no sch_netem"
  done
}

# start NAME ROLE INDEX FLAGS...: runs a task in its namespace, log in $work.
start() {
  local name="$1" job="$2" index="$3"
  shift 3
  local bin="$build/$job/$job"
  [ "$job" = ps ] && bin="$build/ps/ps_server"
  ip netns exec "$(task_ns "$name")" "$bin" --cluster_spec="$work/cluster.json" --job="$job" \
    --task="$index" "$@" >"$work/$name.log" 2>&1 &
  eval "pid_$name=$!"
}
pid_of() { eval "echo \$pid_$1"; }

# wait_for_line FILE PATTERN SECS
wait_for_line() {
  local deadline=$((SECONDS + $3))
  until grep -q -- "$2" "$1"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no '$2' in $(basename "$1") after $3 s"
    sleep 0.5
  done
}
# wait_for_step FILE STEP SECS: until a progress line of FILE shows a global
# step of at least STEP (the lines come every 10 local steps, and under sync
# replicas global steps need not land on multiples of 10).
wait_for_step() {
  local deadline=$((SECONDS + $3)) at
  while :; do
    at="$({ grep -oE '\] [0-9:. -]+: step [0-9]+,' "$1" 2>/dev/null || true; } |
          grep -oE '[0-9]+,$' | tr -d , | sort -n | tail -1 || true)"
    [ "${at:-0}" -ge "$2" ] && return
    [ "$SECONDS" -lt "$deadline" ] || fail "no step $2 in $(basename "$1") after $3 s"
    sleep 0.5
  done
}
# expect_exit_0 NAME SECS: waits for the task; fails unless it exits 0.
expect_exit_0() {
  local pid code=0 deadline=$((SECONDS + $2))
  pid="$(pid_of "$1")"
  while kill -0 "$pid" 2>/dev/null; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$1 still runs after $2 s"
    sleep 0.5
  done
  wait "$pid" || code=$?
  [ "$code" -eq 0 ] || fail "$1 exited $code"
}

spec() {  # spec NUM_PS NUM_WORKERS: chief .10, ps .11.., workers .21..
  local ps="" workers="" i
  for ((i = 0; i < $1; i++)); do ps="$ps${ps:+,}10.231.0.$((11 + i)):2222"; done
  for ((i = 0; i < $2; i++)); do workers="$workers${workers:+,}10.231.0.$((21 + i)):2222"; done
  "$build/cluster/make_cluster_spec" chief=10.231.0.10:2222 "ps=$ps" "worker=$workers" \
    >"$work/cluster.json"
  add_task chief 10
  for ((i = 0; i < $1; i++)); do add_task "ps$i" $((11 + i)); done
  for ((i = 0; i < $2; i++)); do add_task "worker$i" $((21 + i)); done
}

# The chief and the workers each take the flags they know.
common=(--model=mnist --train_examples=12800 --epochs=0 --http_port=-1 --intra_op_threads=1
        --learning_rate=0.05 --train_dir="$work/train" --tensor_shm=false
        --undefok=train_examples,epochs,http_port,train_dir,tensor_shm,max_steps,heartbeat_timeout_secs)

case "$scenario" in
  delay_loss)
    spec 1 2
    netem_all 10 11 21 22
    start ps0 ps 0
    start chief chief 0 "${common[@]}" --max_steps=120
    start worker0 worker 0 "${common[@]}" --max_steps=120
    start worker1 worker 1 "${common[@]}" --max_steps=120
    expect_exit_0 chief 240
    grep -q "final: step 1[2-9][0-9], test accuracy" "$work/chief.log" || fail "no final accuracy"
    echo "delay_loss: $(grep -o 'final: .*' "$work/chief.log")"
    ;;
  ps_cut)
    spec 2 1
    start ps0 ps 0
    start ps1 ps 1
    start chief chief 0 "${common[@]}" --max_steps=500
    start worker0 worker 0 "${common[@]}" --max_steps=500
    wait_for_step "$work/worker0.log" 100 120
    ip -n "$hub" link set "$(hub_port 12)" down
    echo "ps_cut: ps:1 cut off at $(date +%T)"
    sleep 30
    ip -n "$hub" link set "$(hub_port 12)" up
    echo "ps_cut: ps:1 back at $(date +%T)"
    expect_exit_0 chief 240
    grep -q "retrying in" "$work/worker0.log" || fail "the worker did not log its back-off"
    grep -q "final: step 500, test accuracy" "$work/chief.log" || fail "global_step did not reach 500"
    if grep -q "restarted (new incarnation)\|holds no variables\|restored" "$work/chief.log"; then
      fail "a ps lost its state"
    fi
    echo "ps_cut: $(grep -c 'retrying in' "$work/worker0.log") retries logged;" \
      "$(grep -o 'final: .*' "$work/chief.log")"
    ;;
  worker_cut)
    spec 1 3
    sync=(--sync_replicas --replicas_to_aggregate=2 --total_num_replicas=3
          --heartbeat_timeout_secs=5)
    start ps0 ps 0
    start chief chief 0 "${common[@]}" "${sync[@]}" --max_steps=200
    for i in 0 1 2; do start "worker$i" worker "$i" "${common[@]}" "${sync[@]}" --max_steps=200; done
    wait_for_step "$work/worker0.log" 40 120
    ip -n "$hub" link set "$(hub_port 23)" down
    echo "worker_cut: worker:2 cut off at $(date +%T)"
    wait_for_line "$work/chief.log" "worker:2 declared dead" 60
    expect_exit_0 chief 240
    grep -q "final: step 200, test accuracy" "$work/chief.log" || fail "the steps did not go on to 200"
    echo "worker_cut: $(grep -o 'worker:2 declared dead.*' "$work/chief.log" | head -1);" \
      "$(grep -o 'final: .*' "$work/chief.log")"
    ;;
  *)
    echo "unknown scenario $scenario" >&2
    exit 2
    ;;
esac
echo "PASSED: $scenario"
