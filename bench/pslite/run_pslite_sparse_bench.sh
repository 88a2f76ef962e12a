#!/usr/bin/env bash
# Builds pslite_sparse_bench.cc (next to this script) against a ps-lite
# checkout and runs it on loopback, ps-lite's side of bench/sparse_bench:
# for each row dimension one scheduler, one server and one worker, each its
# own process. Prints sparse_bench's table on stdout. See README.md.
#
#   run_pslite_sparse_bench.sh [PS_LITE_DIR]        (default /tmp/ps-lite)
#
# Environment (all optional):
#   OUT_DIR        where the binary and the processes' logs go (/tmp/pslite-sparse-bench)
#   ROWS           table rows, all made before the measurement (10000000)
#   DIMS           comma-separated row dimensions, a server process each (16,64)
#   DISTRIBUTIONS  uniform and/or zipf, comma-separated (uniform,zipf)
#   MEASURE_SECONDS  measured wall time of pulls, then of pushes, per case (3)
#   PORT           the scheduler's port, DMLC_PS_ROOT_PORT, of the first dim;
#                  the i-th dim uses PORT + i (9191)
#   JOBS           make -j for building libps.a if it is missing (1)
set -euo pipefail

PSLITE=$(cd "${1:-/tmp/ps-lite}" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT_DIR=${OUT_DIR:-/tmp/pslite-sparse-bench}
ROWS=${ROWS:-10000000}
DIMS=${DIMS:-16,64}
DISTRIBUTIONS=${DISTRIBUTIONS:-uniform,zipf}
SECONDS_PER_OP=${MEASURE_SECONDS:-3}
PORT=${PORT:-9191}
mkdir -p "$OUT_DIR"

# libps.a with the system's libzmq and protobuf (Debian: libzmq3-dev,
# libprotobuf-dev, protobuf-compiler); overriding ZMQ and PROTOBUF keeps
# ps-lite's make/deps.mk from downloading and building its own copies.
if [[ ! -f "$PSLITE/build/libps.a" ]]; then
  echo "building $PSLITE/build/libps.a" >&2
  make -C "$PSLITE" -j"${JOBS:-1}" ps PROTOC="$(command -v protoc)" \
    ZMQ=/usr/include/zmq.h PROTOBUF=/usr/include/google/protobuf/message.h >&2
fi

BIN="$OUT_DIR/pslite_sparse_bench"
if [[ ! -x "$BIN" || "$HERE/pslite_sparse_bench.cc" -nt "$BIN" ||
      "$PSLITE/build/libps.a" -nt "$BIN" ]]; then
  echo "building $BIN" >&2
  # -fno-math-errno as pstrain's own build has it (CMakeLists.txt), so that
  # the Adagrad update's sqrt is not a libm call that can set errno.
  g++ -std=c++14 -O3 -fno-math-errno -Wall -I"$PSLITE/include" "$HERE/pslite_sparse_bench.cc" \
    "$PSLITE/build/libps.a" -lzmq -lprotobuf -pthread -o "$BIN"
fi

export DMLC_PS_ROOT_URI=127.0.0.1 DMLC_NODE_HOST=127.0.0.1
export DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

printf 'transport: ps-lite (ZeroMQ van); %s rows, Adagrad, 4096 unique keys a request\n' "$ROWS"
printf '%4s %-8s %-5s %12s %8s %14s %10s\n' dim keys op keys/s GB/s "client us/key" "ps us/key"

i=0
IFS=, read -r -a dims <<<"$DIMS"
for dim in "${dims[@]}"; do
  [[ -n "$dim" ]] || continue
  export DMLC_PS_ROOT_PORT=$((PORT + i)) PSLITE_SPARSE_DIM=$dim
  i=$((i + 1))
  log="$OUT_DIR/dim$dim"
  pids=()
  DMLC_ROLE=scheduler "$BIN" >"$log.scheduler.log" 2>&1 &
  pids+=("$!")
  DMLC_ROLE=server "$BIN" >"$log.server.log" 2>&1 &
  server_pid=$!
  pids+=("$server_pid")

  rc=0
  DMLC_ROLE=worker PSLITE_BENCH_SERVER_PID=$server_pid PSLITE_SPARSE_HEADER=0 \
    "$BIN" "$ROWS" "$DISTRIBUTIONS" "$SECONDS_PER_OP" 2>"$log.worker.log" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "worker failed (exit $rc) for dim $dim; logs in $OUT_DIR:" >&2
    tail -n 20 "$log".{scheduler,server,worker}.log >&2
    exit "$rc"
  fi
  grep 'rows made' "$log.worker.log" >&2 || true  # fill time and the server's RSS
  # After the worker's Finalize the scheduler and the server exit by
  # themselves; wait for them (the server frees its table) before the next dim.
  for p in "${pids[@]}"; do
    for _ in $(seq 300); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  done
  cleanup
done
