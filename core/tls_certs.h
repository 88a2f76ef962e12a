// Certificates for mutual TLS (core/tls.h), made in memory: a CA, and
// certificates it signs for the tasks. The local launcher makes its
// cluster's with them (--tls); the tests make expired ones and ones of
// another CA. For a real cluster, scripts/make_certs.sh does the same with
// the openssl command.
#ifndef PSTRAIN_CORE_TLS_CERTS_H_
#define PSTRAIN_CORE_TLS_CERTS_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {

struct CertAndKey {
  std::string cert_pem, key_pem;
};

// A self-signed CA certificate named `name`, valid for ten years.
StatusOr<CertAndKey> MakeCa(const std::string& name);

struct CertOptions {
  std::string name;                // the subject's common name
  std::vector<std::string> hosts;  // subjectAltNames: IP addresses or DNS names
  long valid_from_secs = -60;      // relative to now
  long valid_for_secs = 10L * 365 * 24 * 3600;
};
// A certificate for a server and client (both key usages) that `ca` signs.
StatusOr<CertAndKey> MakeCert(const CertAndKey& ca, const CertOptions& options);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TLS_CERTS_H_
