#!/usr/bin/env bash
# make_certs.sh DIR NAME=HOST[,HOST...] ...: certificates for mutual TLS
# (--tls_cert, --tls_key, --tls_ca on every task), with openssl.
#
# Makes DIR/ca.crt and DIR/ca.key (a CA, valid 10 years) unless DIR already
# has them, then for each NAME a key DIR/NAME.key (mode 0600) and a
# certificate DIR/NAME.crt that the CA signs, valid $DAYS days (default 365)
# for both server and client use, naming every HOST (IP addresses and DNS
# names): the addresses the other tasks dial, as the cluster spec or
# TF_CONFIG gives them. One certificate may serve several tasks: a
# Kubernetes job gives one per replica type, naming each replica's service.
#
#   scripts/make_certs.sh certs \
#     chief=pstrain-mnist-chief-0.default.svc \
#     ps=pstrain-mnist-ps-0.default.svc,pstrain-mnist-ps-1.default.svc \
#     worker=pstrain-mnist-worker-0.default.svc,pstrain-mnist-worker-1.default.svc \
#     evaluator=localhost
#   cd certs && kubectl create secret generic pstrain-tls --from-file=ca.crt \
#     --from-file=chief.crt --from-file=chief.key --from-file=ps.crt --from-file=ps.key \
#     --from-file=worker.crt --from-file=worker.key --from-file=evaluator.crt \
#     --from-file=evaluator.key
#
# Keep ca.key out of the cluster: it signs new certificates. Running the
# script again with other names adds their certificates under the same CA.
set -euo pipefail

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ "$#" -ge 2 ] || usage
dir="$1"
shift
days="${DAYS:-365}"
command -v openssl >/dev/null || { echo "make_certs.sh: openssl is not installed" >&2; exit 1; }
mkdir -p "$dir"
umask 077

if [ ! -f "$dir/ca.key" ] || [ ! -f "$dir/ca.crt" ]; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -days 3650 \
    -subj "/CN=pstrain CA" -keyout "$dir/ca.key" -out "$dir/ca.crt" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  chmod 644 "$dir/ca.crt"
  echo "make_certs.sh: made the CA $dir/ca.crt"
fi

for arg in "$@"; do
  name="${arg%%=*}"
  hosts="${arg#*=}"
  if [ -z "$name" ] || [ "$name" = "$arg" ] || [ -z "$hosts" ] || [ "$name" = ca ]; then
    echo "make_certs.sh: '$arg' is not NAME=HOST[,HOST...] (NAME not ca)" >&2
    exit 2
  fi
  sans=""
  IFS=',' read -ra list <<<"$hosts"
  for h in "${list[@]}"; do
    if [[ "$h" =~ ^[0-9.]+$ || "$h" == *:* ]]; then kind=IP; else kind=DNS; fi
    sans="${sans:+$sans,}$kind:$h"
  done
  ext="$(mktemp)"
  trap 'rm -f "$ext"' EXIT
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=$sans" >"$ext"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -sha256 -subj "/CN=$name" \
    -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" \
    -CAcreateserial -days "$days" -sha256 -extfile "$ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$ext"
  chmod 600 "$dir/$name.key"
  chmod 644 "$dir/$name.crt"
  echo "make_certs.sh: $dir/$name.crt for $sans"
done
