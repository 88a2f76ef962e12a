// Mutual TLS for every channel between the tasks (--tls_cert, --tls_key,
// --tls_ca). Each task has a certificate signed by the cluster's CA: a
// server (a ps's gRPC port and tensor channel) requires the client's
// certificate and checks it against the CA; a client checks the server's
// against the CA and the address it dialed; the chief's HTTP endpoint serves
// HTTPS with its certificate. Without the flags every channel is plain TCP.
//
// The material is loaded and checked once, at the task's start
// (InitTaskMain, from core/tls_flags.h): the three flags together or none; PEM files that parse; a
// key that belongs to the certificate; a certificate the CA signed and not
// expired. A task with bad TLS flags does not start.
#ifndef PSTRAIN_CORE_TLS_H_
#define PSTRAIN_CORE_TLS_H_

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "core/status.h"

namespace pstrain {

struct TlsFiles {
  std::string cert_pem;  // the task's certificate (chain), PEM
  std::string key_pem;   // its private key, PEM
  std::string ca_pem;    // the CA every task's certificate is signed by
  std::string subject;   // the certificate's subject, for logs
};

// Reads and checks the three files; InvalidArgument naming the file and the
// problem.
StatusOr<TlsFiles> LoadTlsFiles(const std::string& cert_path, const std::string& key_path,
                                const std::string& ca_path);
// The same checks on PEM text already in memory.
StatusOr<TlsFiles> CheckTlsFiles(TlsFiles files);

// This task's TLS material, or null: plain TCP.
const TlsFiles* TaskTls();
// Sets (or, with null, clears) TaskTls(): at the start, or in a test,
// before any channel is made.
void SetTaskTls(const TlsFiles* files);

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using SslCtx = std::unique_ptr<SSL_CTX, SslCtxFree>;
// OpenSSL contexts over `files` (TLS 1.2 or later): a server's requires a
// client certificate the CA signed; a client's verifies the server's (the
// host name is set per connection). Internal naming OpenSSL's error.
StatusOr<SslCtx> MakeServerSslCtx(const TlsFiles& files);
StatusOr<SslCtx> MakeClientSslCtx(const TlsFiles& files);
// The task's context for its own TLS connections (the tensor channel's),
// from TaskTls(); null when the task has no TLS. Errors as Make*SslCtx.
StatusOr<std::shared_ptr<SSL_CTX>> TaskServerSslCtx();
StatusOr<std::shared_ptr<SSL_CTX>> TaskClientSslCtx();
// OpenSSL's queued errors as text ("error:0A000086:SSL routines::certificate
// verify failed"), emptying the queue; `fallback` when there are none.
std::string OpenSslErrors(const std::string& fallback);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TLS_H_
