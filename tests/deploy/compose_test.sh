#!/usr/bin/env bash
# Brings deploy/compose/docker-compose.yml up for real under Debian's
# docker-compose 1.29, on a network of its own, and disturbs the cluster while
# it trains mnist (12 epochs):
#   1. ps-0's process is killed (SIGKILL from the host, as a crash or the OOM
#      killer does): the restart policy brings the container back, the chief
#      restores the ps from the latest checkpoint and training goes on;
#   2. `docker kill` of the chief: it is started again (Docker applies no
#      restart policy after `docker kill`) and carries on from the ps tasks;
#   3. worker-1 is disconnected from the network for 30 s: it backs off and
#      logs it, the chief declares it dead, and once reconnected it rejoins;
#   4. `docker stop` of the chief (SIGTERM): it saves a checkpoint, exits 143,
#      is started again and the job completes.
# Throughout, /metrics is read through the published port. At the end: the
# chief's final test accuracy is at least 0.90 (the README's), every
# container has exited 0, the evaluator ended with the job, and
# `docker-compose down -v` leaves no container, network or volume behind.
#
#   bash tests/deploy/compose_test.sh     # as root; about 15 minutes with the image build
#
# Installs what it needs from Debian, starts dockerd if none runs (and stops
# it at exit), makes debian:12 if missing and builds pstrain:latest from the
# working tree (tests/deploy/docker_engine.sh). Exits 77 (ctest: skipped),
# naming why, where no Docker engine can run; 1 when a check fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="$(mktemp -d /tmp/pstrain_compose_test.XXXXXX)"
log() { echo "compose_test: $(date +%T) $*"; }
fail() {
  echo "compose_test: FAIL: $*"
  for s in chief ps-0 ps-1 worker-0 worker-1 evaluator; do
    echo "---- $s (last 15 lines)"
    compose logs --no-color --tail=15 "$s" 2>/dev/null || true
  done
  exit 1
}
# shellcheck source=tests/deploy/docker_engine.sh
source "$here/docker_engine.sh"
on_exit "rm -rf '$work'"

docker_engine_up

project="pstrain-compose-test-$$"
# A subnet of its own (test networks stay on this machine).
cat >"$work/network.yml" <<'EOF'
networks:
  default:
    ipam:
      config:
        - subnet: 10.213.71.0/24
EOF
http_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
export PSTRAIN_HTTP_PORT="$http_port"
compose() {
  docker-compose -p "$project" -f "$repo/deploy/compose/docker-compose.yml" -f "$work/network.yml" "$@"
}
container() { echo "${project}_$1_1"; }
network="${project}_default"

down() {
  compose down -v --remove-orphans >"$work/down.log" 2>&1 || cat "$work/down.log"
}
on_exit down

exit_code() { docker inspect -f '{{.State.ExitCode}}' "$(container "$1")"; }
status_of() { docker inspect -f '{{.State.Status}}' "$(container "$1")"; }
restarts_of() { docker inspect -f '{{.RestartCount}}' "$(container "$1")"; }
logs_of() { docker logs "$(container "$1")" 2>&1; }

metrics_reads=0
# global_step from /metrics on the published port; empty while the chief is down.
global_step() {
  local m
  m="$(curl -fsS --max-time 5 "http://127.0.0.1:$http_port/metrics" 2>/dev/null)" || return 0
  metrics_reads=$((metrics_reads + 1))
  sed -n 's/^pstrain_global_step \([0-9]*\).*/\1/p' <<<"$m"
}

# Waits (at most $2 seconds) until global_step reaches $1.
wait_for_step() {
  local target="$1" deadline=$((SECONDS + $2)) step=""
  while [ "$SECONDS" -lt "$deadline" ]; do
    step="$(global_step)"
    if [ -n "$step" ] && [ "$step" -ge "$target" ]; then
      log "global_step $step"
      return 0
    fi
    sleep 2
  done
  fail "global_step did not reach $target within $2 s (last read: ${step:-none})"
}

# wait_until SECONDS WHAT COMMAND...: polls COMMAND every 2 s until it
# succeeds; fails the test naming WHAT after SECONDS.
wait_until() {
  local deadline=$((SECONDS + $1)) what="$2"
  shift 2
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "$what"
    sleep 2
  done
}
# grep reads the whole log: with -q it would stop at the first match and,
# under pipefail, the `docker logs` it leaves behind would fail the check.
log_has() { logs_of "$1" | grep -E "$2" >/dev/null; }
is_running() { [ "$(status_of "$1")" = running ]; }
is_healthy() { [ "$(docker inspect -f '{{.State.Health.Status}}' "$(container "$1")")" = healthy ]; }
restarted() { [ "$(restarts_of "$1")" -ge 1 ] && is_running "$1"; }
has_exited() { [ "$(status_of "$1")" = exited ]; }

# Waits (at most $3 seconds) until service $1's log has $2 (a grep -E pattern).
wait_for_log() { wait_until "$3" "$1 did not log /$2/ within $3 s" log_has "$1" "$2"; }

started=$SECONDS
log "up: project $project, status page on 127.0.0.1:$http_port"
compose up -d --no-build >"$work/up.log" 2>&1 || { cat "$work/up.log"; fail "docker-compose up"; }
wait_for_step 1 300
for s in chief ps-0 ps-1; do
  wait_until 120 "$s is not healthy after 120 s" is_healthy "$s"
done
log "chief, ps-0 and ps-1 healthy"

# 1. ps-0 crashes, after a checkpoint the chief can restore it from.
wait_for_step 300 600
wait_for_log chief "saved checkpoint" 120
log "scenario 1: SIGKILL to ps-0's process"
kill -KILL "$(docker inspect -f '{{.State.Pid}}' "$(container ps-0)")"
wait_until 120 "ps-0 was not restarted by its restart policy" restarted ps-0
wait_for_log chief "restored every ps from" 180
step="$(global_step)"
wait_for_step $((${step:-0} + 100)) 300
log "scenario 1 passed: ps-0 restarted (restart policy), restored, training goes on"

# 2. The chief is killed.
log "scenario 2: docker kill chief"
docker kill "$(container chief)" >/dev/null
[ "$(exit_code chief)" = 137 ] || fail "the killed chief exited $(exit_code chief), not 137"
compose start chief >/dev/null 2>&1
wait_until 60 "the chief is not running after a start" is_running chief
wait_for_log chief "a restarted chief carries on" 180
step="$(global_step)"
wait_for_step $((${step:-0} + 100)) 300
log "scenario 2 passed: the chief came back and carried on from the ps tasks"

# 3. worker-1 loses the network for 30 s.
log "scenario 3: worker-1 disconnected for 30 s"
docker network disconnect "$network" "$(container worker-1)"
disconnected=$SECONDS
wait_for_log worker-1 "retrying in" 30
wait_for_log chief "worker:1 declared dead" 30
sleep $((30 - (SECONDS - disconnected)))  # the fault's duration
docker network connect --alias worker-1 "$network" "$(container worker-1)"
log "worker-1 reconnected"
wait_for_log chief "worker:1 is back" 120
[ "$(status_of worker-1)" = running ] || fail "worker-1 is not running after the disconnection"
log "scenario 3 passed: worker-1 backed off, logged it and rejoined"

# 4. The chief gets SIGTERM before the end.
step="$(global_step)"
wait_for_step $((${step:-0} + 100)) 300
log "scenario 4: docker stop chief (SIGTERM)"
docker stop -t 60 "$(container chief)" >/dev/null
[ "$(exit_code chief)" = 143 ] || fail "the SIGTERM'd chief exited $(exit_code chief), not 143"
log_has chief "\(graceful stop" || fail "the chief saved no checkpoint on SIGTERM"
compose start chief >/dev/null 2>&1
wait_until 60 "the chief is not running after a start" is_running chief
log "scenario 4: the chief exited 143 after saving, and was started again"

# The end: the chief finishes the job, every task exits 0.
log "waiting for the job to complete"
# (/metrics is read on each look, as a monitor would.)
chief_done() { global_step >/dev/null; ! is_running chief; }
wait_until 1800 "the job did not complete within 30 minutes" chief_done
for s in chief ps-0 ps-1 worker-0 worker-1 evaluator; do
  wait_until 180 "$s did not exit after the job completed" has_exited "$s"
  [ "$(exit_code "$s")" = 0 ] || fail "$s exited $(exit_code "$s")"
done
final="$(logs_of chief | grep -o 'final: step [0-9]*, test accuracy [0-9.]*' | tail -n 1)"
[ -n "$final" ] || fail "no final line from the chief"
accuracy="${final##* }"
python3 -c "import sys; sys.exit(0 if float('$accuracy') >= 0.90 else 1)" ||
  fail "$final: below the README's 0.90"
log_has evaluator "training is done" || fail "the evaluator did not end with the job"
[ "$metrics_reads" -gt 0 ] || fail "/metrics was never read through the published port"
log "every container exited 0; $final; /metrics read $metrics_reads times on port $http_port"
log "scenario 4 passed: the job completed after the SIGTERM"

compose down -v --remove-orphans >"$work/down.log" 2>&1 || { cat "$work/down.log"; fail "down -v"; }
left="$(docker ps -aq --filter "label=com.docker.compose.project=$project")"
left+="$(docker network ls -q --filter "label=com.docker.compose.project=$project")"
left+="$(docker volume ls -q --filter "label=com.docker.compose.project=$project")"
[ -z "$left" ] || fail "down -v left behind: $left"
log "down -v left no container, network or volume"
log "PASS in $((SECONDS - started)) s of cluster time"
