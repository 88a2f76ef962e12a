#include "deploy/local/local_certs.h"

#include <sys/stat.h>

#include <fstream>

#include "core/tls_certs.h"

namespace pstrain {
namespace {

// "ps:0" -> "ps-0"
std::string FileStem(const std::string& task) {
  std::string stem = task;
  for (char& c : stem) {
    if (c == ':') c = '-';
  }
  return stem;
}

Status WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) return Unavailable("cannot write " + path);
  }
  if (chmod(path.c_str(), mode) != 0) return Unavailable("cannot chmod " + path);
  return OkStatus();
}

}  // namespace

Status WriteLocalCerts(const std::string& dir, const std::string& host,
                       const std::vector<std::string>& tasks) {
  PS_ASSIGN_OR_RETURN(CertAndKey ca, MakeCa("pstrain_local CA"));
  PS_RETURN_IF_ERROR(WriteFile(dir + "/ca.crt", ca.cert_pem, 0644));
  std::vector<std::string> hosts = {host};
  for (const char* h : {"localhost", "127.0.0.1"}) {
    if (host != h) hosts.push_back(h);
  }
  for (const std::string& task : tasks) {
    PS_ASSIGN_OR_RETURN(CertAndKey cert, MakeCert(ca, {task, hosts}));
    const std::string stem = dir + "/" + FileStem(task);
    PS_RETURN_IF_ERROR(WriteFile(stem + ".crt", cert.cert_pem, 0644));
    PS_RETURN_IF_ERROR(WriteFile(stem + ".key", cert.key_pem, 0600));
  }
  return OkStatus();
}

std::vector<std::string> LocalTlsFlags(const std::string& dir, const std::string& task) {
  const std::string stem = dir + "/" + FileStem(task);
  return {"--tls_cert=" + stem + ".crt", "--tls_key=" + stem + ".key",
          "--tls_ca=" + dir + "/ca.crt"};
}

StatusOr<TlsFiles> LoadLocalCerts(const std::string& dir, const std::string& task) {
  const std::string stem = dir + "/" + FileStem(task);
  return LoadTlsFiles(stem + ".crt", stem + ".key", dir + "/ca.crt");
}

}  // namespace pstrain
