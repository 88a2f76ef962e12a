#!/bin/bash
# The ps's layers hold (docs/ARCHITECTURE.md):
#   1. the ps's logic library (pstrain_ps) links neither gRPC nor socket
#      code: nothing in its link closure is a transport, and no object in it
#      calls gRPC, Asio or a socket function;
#   2. no header outside ps/rpc/ and ps/tcp/ (and the test-only ps/testing/,
#      fuzz/, tests/, bench/) includes theirs, and no header of the ps's
#      logic or client side includes gRPC, Asio or the socket API.
# Usage: check_layers.sh SOURCE_DIR LOGIC_LIBRARY LINK_CLOSURE_FILE
set -u
src=$1
lib=$2
closure=$3
failed=0

fail() {
  echo "FAIL: $*"
  failed=1
}

# 1. What the logic library links, and what its objects call.
[[ -f $closure ]] || { echo "no link closure at $closure"; exit 2; }
[[ -f $lib ]] || { echo "no library at $lib"; exit 2; }
while read -r dep; do
  fail "pstrain_ps links $dep, a transport"
done < <(grep -Ei 'grpc|tensor_channel|boost|asio' "$closure")
while read -r sym; do
  fail "pstrain_ps calls $sym"
done < <(nm -C --undefined-only "$lib" | awk '{print $NF}' | sort -u |
         grep -E '^(grpc|grpc_|boost::asio)|^(socket|connect|bind|listen|accept4?|getaddrinfo|sendmsg|recvmsg|setsockopt)(@|$)')

# 2. Who includes the transports.
transport_include='#include[[:space:]]*"ps/(rpc|tcp)/'
api_include='#include[[:space:]]*<(grpcpp/|grpc/|boost/asio|sys/socket\.h|netinet/|arpa/inet\.h)'
cd "$src" || exit 2
while IFS= read -r -d '' header; do
  case $header in
    ./ps/rpc/* | ./ps/tcp/* | ./ps/testing/* | ./fuzz/* | ./tests/* | ./bench/* | ./build*) continue ;;
  esac
  while IFS= read -r line; do
    fail "$header includes a transport's header: $line"
  done < <(grep -En "$transport_include" "$header")
  case $header in
    ./ps/*)
      while IFS= read -r line; do
        fail "$header includes a transport API: $line"
      done < <(grep -En "$api_include" "$header")
      ;;
  esac
done < <(find . -name '*.h' -not -path './build*' -not -path './.git/*' -print0)

if (( failed )); then
  echo "the ps's layers are crossed (see docs/ARCHITECTURE.md)"
  exit 1
fi
echo "the ps's logic links no transport; no header outside ps/rpc/ and ps/tcp/ includes theirs"
