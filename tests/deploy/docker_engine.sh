# Sourced by the container tests: a Docker engine to run them on, and the
# images they need. Defines
#   docker_engine_up   installs docker.io, docker-compose and debootstrap from
#                      Debian where missing, starts dockerd if none runs (and
#                      stops it again at exit, restoring the host's packet
#                      forwarding settings that dockerd changes, which other
#                      tests on this host rely on), makes debian:12 with
#                      deploy/docker/make_base_image.sh if no image has that
#                      name, and builds pstrain:latest from the working tree.
#                      Exits 77 (ctest: skipped), naming why, where no engine
#                      can run.
#   docker             Debian's client (/usr/bin/docker) where it is installed.
#   on_exit CMD        runs CMD at exit, before the engine is stopped.
# Needs $repo (the repository root) and a log function.

docker() {
  if [ -x /usr/bin/docker ]; then /usr/bin/docker "$@"; else command docker "$@"; fi
}

exit_hooks=()
on_exit() { exit_hooks+=("$1"); }
run_exit_hooks() {
  local status=$?
  for ((i = ${#exit_hooks[@]} - 1; i >= 0; i--)); do eval "${exit_hooks[$i]}" || true; done
  exit "$status"
}
trap run_exit_hooks EXIT

skip() {
  echo "$(basename "$0"): skipped: $*"
  exit 77
}

# What dockerd changes on start (it turns packet forwarding between bridges
# off and sends bridged traffic through iptables), to put back at exit.
saved_forward_policy=""
saved_sysctls=()
save_forwarding_settings() {
  saved_forward_policy="$(iptables -S FORWARD 2>/dev/null | sed -n 's/^-P FORWARD //p')"
  local key
  for key in net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables; do
    if sysctl -n "$key" >/dev/null 2>&1; then saved_sysctls+=("$key=$(sysctl -n "$key")"); fi
  done
}
restore_forwarding_settings() {
  [ -n "$saved_forward_policy" ] && iptables -P FORWARD "$saved_forward_policy"
  local kv
  for kv in "${saved_sysctls[@]}"; do sysctl -qw "$kv" >/dev/null; done
  # br_netfilter, if dockerd loaded it, defaults to filtering bridged traffic.
  if [ "${#saved_sysctls[@]}" -eq 0 ] && sysctl -n net.bridge.bridge-nf-call-iptables >/dev/null 2>&1; then
    sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0
  fi
}

stop_dockerd() {
  local pid="$1"
  kill "$pid" 2>/dev/null || return 0
  local i
  for i in $(seq 1 60); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -9 "$pid" 2>/dev/null || true
  restore_forwarding_settings
}

docker_engine_up() {
  [ "$(id -u)" = 0 ] || skip "needs root to run a Docker engine"
  if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null ||
     ! command -v debootstrap >/dev/null; then
    bash "$repo/scripts/apt_install.sh" docker.io docker-compose debootstrap ||
      skip "cannot install docker.io, docker-compose and debootstrap from Debian"
  fi
  if ! docker info >/dev/null 2>&1; then
    save_forwarding_settings
    log "starting dockerd (log: $work/dockerd.log)"
    dockerd >"$work/dockerd.log" 2>&1 &
    local pid=$!
    on_exit "stop_dockerd $pid"
    local i
    for i in $(seq 1 120); do
      docker info >/dev/null 2>&1 && break
      kill -0 "$pid" 2>/dev/null || skip "dockerd exited: $(tail -n 3 "$work/dockerd.log")"
      sleep 0.5
    done
    docker info >/dev/null 2>&1 || skip "dockerd did not answer within 60 s"
  fi
  if ! docker image inspect debian:12 >/dev/null 2>&1; then
    log "making debian:12 with debootstrap"
    bash "$repo/deploy/docker/make_base_image.sh" >"$work/base_image.log" 2>&1 ||
      skip "cannot make debian:12: $(tail -n 3 "$work/base_image.log")"
  fi
  log "building pstrain:latest (log: $work/build.log)"
  local start=$SECONDS
  if ! docker build -f "$repo/deploy/docker/Dockerfile" -t pstrain:latest "$repo" >"$work/build.log" 2>&1; then
    tail -n 30 "$work/build.log"
    echo "$(basename "$0"): FAIL: the image does not build"
    exit 1
  fi
  log "built pstrain:latest in $((SECONDS - start)) s"
}
