// The certificates of a local cluster run with --tls: a CA made for the run
// and a certificate per task it signs (core/tls_certs.h), naming the host
// the tasks listen on, written beside the cluster spec and gone with it.
#ifndef PSTRAIN_DEPLOY_LOCAL_LOCAL_CERTS_H_
#define PSTRAIN_DEPLOY_LOCAL_LOCAL_CERTS_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "core/tls.h"

namespace pstrain {

// Writes dir/ca.crt and, for each task ("ps:0"), dir/ps-0.crt and
// dir/ps-0.key (mode 0600). The certificates name `host`, localhost and
// 127.0.0.1.
Status WriteLocalCerts(const std::string& dir, const std::string& host,
                       const std::vector<std::string>& tasks);

// The task flags that use them: --tls_cert, --tls_key and --tls_ca.
std::vector<std::string> LocalTlsFlags(const std::string& dir, const std::string& task);
// The same files loaded and checked, for a process that is that task.
StatusOr<TlsFiles> LoadLocalCerts(const std::string& dir, const std::string& task);

}  // namespace pstrain

#endif  // PSTRAIN_DEPLOY_LOCAL_LOCAL_CERTS_H_
