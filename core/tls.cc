#include "core/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "core/openssl_ptr.h"

namespace pstrain {
namespace {

std::mutex tls_mu;
std::unique_ptr<TlsFiles> task_tls;  // guarded by tls_mu; set at start

using openssl::MemoryBio;
using openssl::X509Ptr;

struct StoreFree {
  void operator()(X509_STORE* s) const { X509_STORE_free(s); }
};
struct StoreCtxFree {
  void operator()(X509_STORE_CTX* s) const { X509_STORE_CTX_free(s); }
};
StatusOr<std::string> ReadFile(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(std::string(flag) + "=" + path + ": cannot be read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Every certificate in `pem`; InvalidArgument when there is none.
StatusOr<std::vector<X509Ptr>> ParseCertificates(const std::string& pem, const std::string& what) {
  openssl::Bio bio = MemoryBio(pem);
  std::vector<X509Ptr> certs;
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certs.emplace_back(x);
  ERR_clear_error();  // the end of the text reads as an error
  if (certs.empty()) return InvalidArgument(what + ": no PEM certificate in it");
  return certs;
}

std::string Subject(X509* cert) {
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

// Adds every certificate of `ca_pem` to the store.
Status AddCas(X509_STORE* store, const std::string& ca_pem) {
  PS_ASSIGN_OR_RETURN(auto cas, ParseCertificates(ca_pem, "--tls_ca"));
  for (auto& ca : cas) {
    if (X509_STORE_add_cert(store, ca.get()) != 1) {
      return Internal("--tls_ca: " + OpenSslErrors("cannot use it as a CA"));
    }
  }
  return OkStatus();
}

// The certificate chain and key of `files` into a context.
Status UseCertificateAndKey(SSL_CTX* ctx, const TlsFiles& files) {
  PS_ASSIGN_OR_RETURN(auto chain, ParseCertificates(files.cert_pem, "--tls_cert"));
  if (SSL_CTX_use_certificate(ctx, chain[0].get()) != 1) {
    return Internal("--tls_cert: " + OpenSslErrors("not usable"));
  }
  for (size_t i = 1; i < chain.size(); ++i) {
    if (SSL_CTX_add1_chain_cert(ctx, chain[i].get()) != 1) {
      return Internal("--tls_cert: " + OpenSslErrors("its chain is not usable"));
    }
  }
  openssl::Bio bio = MemoryBio(files.key_pem);
  openssl::Pkey key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr)
    return InvalidArgument("--tls_key: " + OpenSslErrors("no PEM private key in it"));
  if (X509_check_private_key(chain[0].get(), key.get()) != 1) {
    ERR_clear_error();
    return InvalidArgument("--tls_key does not belong to --tls_cert");
  }
  if (SSL_CTX_use_PrivateKey(ctx, key.get()) != 1) {
    return Internal("--tls_key: " + OpenSslErrors("not a usable private key"));
  }
  return OkStatus();
}

StatusOr<SslCtx> MakeContext(const TlsFiles& files, bool server) {
  SslCtx ctx(SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()));
  if (ctx == nullptr) return Internal(OpenSslErrors("SSL_CTX_new failed"));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  PS_RETURN_IF_ERROR(UseCertificateAndKey(ctx.get(), files));
  PS_RETURN_IF_ERROR(AddCas(SSL_CTX_get_cert_store(ctx.get()), files.ca_pem));
  SSL_CTX_set_verify(ctx.get(),
                     server ? SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT : SSL_VERIFY_PEER,
                     nullptr);
  return ctx;
}

// The context of TaskTls(), or null without TLS.
StatusOr<std::shared_ptr<SSL_CTX>> TaskContext(bool server) {
  const TlsFiles* tls = TaskTls();
  if (tls == nullptr) return std::shared_ptr<SSL_CTX>();
  PS_ASSIGN_OR_RETURN(SslCtx ctx, MakeContext(*tls, server));
  return std::shared_ptr<SSL_CTX>(std::move(ctx));
}

}  // namespace

std::string OpenSslErrors(const std::string& fallback) {
  std::string text;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    text += (text.empty() ? "" : "; ") + std::string(buf);
  }
  return text.empty() ? fallback : text;
}

StatusOr<TlsFiles> CheckTlsFiles(TlsFiles files) {
  PS_ASSIGN_OR_RETURN(auto chain, ParseCertificates(files.cert_pem, "--tls_cert"));
  // The key must parse and match: the server context checks both.
  PS_ASSIGN_OR_RETURN(SslCtx probe, MakeContext(files, /*server=*/true));
  // Signed by the CA, and valid now.
  std::unique_ptr<X509_STORE, StoreFree> store(X509_STORE_new());
  PS_RETURN_IF_ERROR(AddCas(store.get(), files.ca_pem));
  std::unique_ptr<X509_STORE_CTX, StoreCtxFree> verify(X509_STORE_CTX_new());
  STACK_OF(X509)* untrusted = sk_X509_new_null();
  for (size_t i = 1; i < chain.size(); ++i) sk_X509_push(untrusted, chain[i].get());
  X509_STORE_CTX_init(verify.get(), store.get(), chain[0].get(), untrusted);
  const int ok = X509_verify_cert(verify.get());
  const int err = X509_STORE_CTX_get_error(verify.get());
  sk_X509_free(untrusted);
  files.subject = Subject(chain[0].get());
  if (ok != 1) {
    return InvalidArgument("--tls_cert (" + files.subject + ") does not verify against --tls_ca: " +
                           X509_verify_cert_error_string(err));
  }
  return files;
}

StatusOr<TlsFiles> LoadTlsFiles(const std::string& cert_path, const std::string& key_path,
                                const std::string& ca_path) {
  TlsFiles files;
  PS_ASSIGN_OR_RETURN(files.cert_pem, ReadFile(cert_path, "--tls_cert"));
  PS_ASSIGN_OR_RETURN(files.key_pem, ReadFile(key_path, "--tls_key"));
  PS_ASSIGN_OR_RETURN(files.ca_pem, ReadFile(ca_path, "--tls_ca"));
  return CheckTlsFiles(std::move(files));
}

const TlsFiles* TaskTls() {
  std::lock_guard<std::mutex> lock(tls_mu);
  return task_tls.get();
}

void SetTaskTls(const TlsFiles* files) {
  std::lock_guard<std::mutex> lock(tls_mu);
  task_tls = files != nullptr ? std::make_unique<TlsFiles>(*files) : nullptr;
}

StatusOr<SslCtx> MakeServerSslCtx(const TlsFiles& files) { return MakeContext(files, true); }
StatusOr<SslCtx> MakeClientSslCtx(const TlsFiles& files) { return MakeContext(files, false); }

StatusOr<std::shared_ptr<SSL_CTX>> TaskServerSslCtx() { return TaskContext(true); }
StatusOr<std::shared_ptr<SSL_CTX>> TaskClientSslCtx() { return TaskContext(false); }

}  // namespace pstrain
