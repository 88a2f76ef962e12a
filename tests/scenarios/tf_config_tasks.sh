# Sourced by the scenarios: a cluster of real processes on loopback, each
# started with nothing but TF_CONFIG, as Kubeflow starts them.
#
#   make_cluster NUM_WORKERS         1 chief, 2 ps and the workers, on free
#                                    ports: sets $cluster (the spec's JSON)
#   start_task TYPE INDEX BINARY     starts $BUILD/BINARY with every flag of
#                                    the array $flags, logging to
#                                    $OUT/TYPE-INDEX.log; its pid in $pids
#   start_cluster NUM_WORKERS        both ps, the chief, the workers
#   wait_for_tasks                   waits for every task (at most
#                                    $LIMIT_SECS from $begin), prints each
#                                    exit code; sets status=1 unless all are 0

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

make_cluster() {
  local workers="" w
  for (( w = 0; w < $1; w++ )); do workers+="${workers:+,}127.0.0.1:$(free_port)"; done
  cluster="$("$BUILD/cluster/make_cluster_spec" "chief=127.0.0.1:$(free_port)" \
    "ps=127.0.0.1:$(free_port),127.0.0.1:$(free_port)" "worker=$workers")"
}

declare -A pids
start_task() {
  # Every task gets every flag; each ignores those it does not define.
  local undefok
  undefok=$(printf '%s\n' "${flags[@]}" | sed -n 's/^--\([a-z_0-9]*\).*/\1/p' | paste -sd, -)
  TF_CONFIG="{\"cluster\":$cluster,\"task\":{\"type\":\"$1\",\"index\":$2}}" \
    "$BUILD/$3" "${flags[@]}" --undefok="$undefok" >"$OUT/$1-$2.log" 2>&1 &
  pids["$1:$2"]=$!
}

start_cluster() {
  local w
  start_task ps 0 ps/ps_server
  start_task ps 1 ps/ps_server
  start_task chief 0 chief/chief
  for (( w = 0; w < $1; w++ )); do start_task worker "$w" worker/worker; done
}

wait_for_tasks() {
  local task pid rc
  for task in "${!pids[@]}"; do
    pid=${pids[$task]}
    while kill -0 "$pid" 2>/dev/null && (( $(date +%s) - begin < LIMIT_SECS )); do sleep 1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "$task still running after ${LIMIT_SECS} s: the job did not end"
      status=1
      continue
    fi
    wait "$pid"; rc=$?
    echo "$task exited $rc"
    (( rc == 0 )) || status=1
  done
  kill $(jobs -p) 2>/dev/null
}
