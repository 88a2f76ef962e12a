#!/usr/bin/env bash
# Builds pslite_transfer_bench.cc (next to this script) against a ps-lite
# checkout and runs it on loopback: one scheduler, one server and one worker,
# each its own process. Prints the markdown table on stdout. See README.md.
#
#   run_pslite_bench.sh [PS_LITE_DIR]        (default /tmp/ps-lite)
#
# Environment (all optional):
#   OUT_DIR           where the binary and the processes' logs go (/tmp/pslite-bench)
#   SIZES             comma-separated bytes (4096,...,268435456: pstrain's list)
#   SECONDS_PER_SIZE  measured wall time per size (2)
#   MIN_ROUNDS        (5)      WARMUP_ROUNDS (2)
#   PORT              the scheduler's port, DMLC_PS_ROOT_PORT (9091)
#   JOBS              make -j for building libps.a if it is missing (1)
set -euo pipefail

PSLITE=$(cd "${1:-/tmp/ps-lite}" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT_DIR=${OUT_DIR:-/tmp/pslite-bench}
SIZES=${SIZES:-4096,65536,1048576,4382720,16777216,67108864,268435456}
SECONDS_PER_SIZE=${SECONDS_PER_SIZE:-2}
MIN_ROUNDS=${MIN_ROUNDS:-5}
WARMUP_ROUNDS=${WARMUP_ROUNDS:-2}
PORT=${PORT:-9091}
mkdir -p "$OUT_DIR"

# libps.a with the system's libzmq and protobuf (Debian: libzmq3-dev,
# libprotobuf-dev, protobuf-compiler); overriding ZMQ and PROTOBUF keeps
# ps-lite's make/deps.mk from downloading and building its own copies.
if [[ ! -f "$PSLITE/build/libps.a" ]]; then
  echo "building $PSLITE/build/libps.a" >&2
  make -C "$PSLITE" -j"${JOBS:-1}" ps PROTOC="$(command -v protoc)" \
    ZMQ=/usr/include/zmq.h PROTOBUF=/usr/include/google/protobuf/message.h >&2
fi

BIN="$OUT_DIR/pslite_transfer_bench"
if [[ ! -x "$BIN" || "$HERE/pslite_transfer_bench.cc" -nt "$BIN" ||
      "$PSLITE/build/libps.a" -nt "$BIN" ]]; then
  echo "building $BIN" >&2
  g++ -std=c++14 -O3 -Wall -I"$PSLITE/include" "$HERE/pslite_transfer_bench.cc" \
    "$PSLITE/build/libps.a" -lzmq -lprotobuf -pthread -o "$BIN"
fi

export DMLC_PS_ROOT_URI=127.0.0.1 DMLC_PS_ROOT_PORT=$PORT DMLC_NODE_HOST=127.0.0.1
export DMLC_NUM_SERVER=1 DMLC_NUM_WORKER=1
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

DMLC_ROLE=scheduler "$BIN" >"$OUT_DIR/scheduler.log" 2>&1 &
pids+=($!)
DMLC_ROLE=server "$BIN" >"$OUT_DIR/server.log" 2>&1 &
server_pid=$!
pids+=($server_pid)

rc=0
DMLC_ROLE=worker PSLITE_BENCH_SERVER_PID=$server_pid "$BIN" "$SIZES" "$SECONDS_PER_SIZE" \
  "$MIN_ROUNDS" "$WARMUP_ROUNDS" 2>"$OUT_DIR/worker.log" || rc=$?
if [[ $rc -ne 0 ]]; then
  echo "worker failed (exit $rc); logs in $OUT_DIR:" >&2
  tail -n 20 "$OUT_DIR"/{scheduler,server,worker}.log >&2
  exit "$rc"
fi
# After the worker's Finalize the scheduler and the server exit by themselves.
for p in "${pids[@]}"; do
  for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
done
