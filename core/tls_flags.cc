#include "core/tls_flags.h"

#include <gflags/gflags.h>

#include "core/tls.h"

DEFINE_string(tls_cert, "",
              "Mutual TLS: this task's certificate (PEM), signed by --tls_ca; with --tls_key and "
              "--tls_ca every channel to and from the task is TLS (scripts/make_certs.sh)");
DEFINE_string(tls_key, "", "Mutual TLS: the private key of --tls_cert (PEM)");
DEFINE_string(tls_ca, "",
              "Mutual TLS: the CA certificate (PEM) that signs every task's certificate; "
              "peers whose certificate it did not sign are refused");

namespace pstrain {

Status InitTaskTlsFromFlags() {
  const int set = !FLAGS_tls_cert.empty() + !FLAGS_tls_key.empty() + !FLAGS_tls_ca.empty();
  if (set == 0) return OkStatus();
  if (set != 3) return InvalidArgument("--tls_cert, --tls_key and --tls_ca go together");
  PS_ASSIGN_OR_RETURN(TlsFiles files, LoadTlsFiles(FLAGS_tls_cert, FLAGS_tls_key, FLAGS_tls_ca));
  SetTaskTls(&files);
  return OkStatus();
}

}  // namespace pstrain
