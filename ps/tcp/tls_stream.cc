#include "ps/tcp/tls_stream.h"

#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include "core/tls.h"

namespace pstrain {
namespace tcp {
namespace {

constexpr size_t kRecordBytes = 16 << 10;  // TLS's largest record

// The error of an SSL call that failed other than for want of the socket:
// the peer closed the connection, or it broke.
Status Ended(const char* what, int err) {
  if (err == SSL_ERROR_ZERO_RETURN) return Unavailable(std::string("tls ") + what + ": closed");
  return Unavailable(std::string("tls ") + what + ": " + OpenSslErrors("connection broken"));
}

}  // namespace

StatusOr<std::unique_ptr<TlsStream>> TlsStream::Connect(SSL_CTX* ctx, Socket* socket,
                                                        const std::string& host) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TlsStream> stream, Begin(ctx, socket, &host));
  for (;;) {
    PS_ASSIGN_OR_RETURN(const Progress progress, stream->Advance());
    if (progress == Progress::kDone) return stream;
    PS_RETURN_IF_ERROR(socket->Await(progress == Progress::kWantWrite, "TLS handshake"));
  }
}

StatusOr<std::unique_ptr<TlsStream>> TlsStream::BeginAccept(SSL_CTX* ctx, Socket* socket) {
  return Begin(ctx, socket, nullptr);
}

StatusOr<std::unique_ptr<TlsStream>> TlsStream::Begin(SSL_CTX* ctx, Socket* socket,
                                                      const std::string* host) {
  // OpenSSL writes to the socket itself: a peer gone must be an error, not
  // a SIGPIPE that ends the process.
  static const bool ignore_sigpipe = [] { return std::signal(SIGPIPE, SIG_IGN) != SIG_ERR; }();
  (void)ignore_sigpipe;
  ERR_clear_error();
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr) return Internal(OpenSslErrors("SSL_new failed"));
  std::unique_ptr<TlsStream> stream(new TlsStream(ssl, socket));
  SSL_set_fd(ssl, socket->fd());
  // A write may end after whole records (WriteNow), and the rest of a
  // record begun may be taken again from another buffer holding the same
  // bytes (a reply's rest, kept for the ps's loop).
  SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (host == nullptr) {
    SSL_set_accept_state(ssl);
    return stream;
  }
  SSL_set_connect_state(ssl);
  // The certificate must name the host dialed: an address or a name.
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (X509_VERIFY_PARAM_set1_ip_asc(param, host->c_str()) != 1) {
    ERR_clear_error();
    X509_VERIFY_PARAM_set1_host(param, host->c_str(), 0);
    SSL_set_tlsext_host_name(ssl, host->c_str());
  }
  return stream;
}

StatusOr<TlsStream::Progress> TlsStream::Advance() {
  ERR_clear_error();
  const int ret = SSL_do_handshake(ssl_);
  if (ret == 1) return Progress::kDone;
  const int err = SSL_get_error(ssl_, ret);
  if (err == SSL_ERROR_WANT_READ) return Progress::kWantRead;
  if (err == SSL_ERROR_WANT_WRITE) return Progress::kWantWrite;
  const long verify = SSL_get_verify_result(ssl_);
  std::string why = OpenSslErrors("the peer closed the connection");
  if (verify != X509_V_OK) why += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
  return PermissionDenied("TLS handshake: " + why);
}

TlsStream::~TlsStream() {
  // A close_notify after a handshake (the socket's owner closes it); one
  // cut mid-handshake would leave an error in this thread's queue.
  if (SSL_is_init_finished(ssl_)) SSL_shutdown(ssl_);
  ERR_clear_error();
  SSL_free(ssl_);
}

std::string TlsStream::peer() const {
  X509* cert = SSL_get0_peer_certificate(ssl_);
  if (cert == nullptr) return "(no certificate)";
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

Status TlsStream::Retry(const char* what, int ret) {
  const int err = SSL_get_error(ssl_, ret);
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
    return socket_->Await(err == SSL_ERROR_WANT_WRITE, what);
  }
  return Ended(what, err);
}

Status TlsStream::AwaitData(std::chrono::steady_clock::time_point until) {
  if (SSL_pending(ssl_) > 0) return OkStatus();
  return socket_->AwaitData(until);
}

Status TlsStream::ReadFull(void* data, size_t n) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(n, 1 << 30));
    ERR_clear_error();  // SSL_get_error reads the thread's queue
    const int got = SSL_read(ssl_, p, chunk);
    if (got <= 0) {
      PS_RETURN_IF_ERROR(Retry("read", got));
      continue;
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return OkStatus();
}

StatusOr<size_t> TlsStream::ReadSome(void* data, size_t n) {
  ERR_clear_error();  // SSL_get_error reads the thread's queue
  const int got = SSL_read(ssl_, data, static_cast<int>(std::min<size_t>(n, 1 << 30)));
  if (got > 0) return static_cast<size_t>(got);
  const int err = SSL_get_error(ssl_, got);
  // WANT_WRITE too: a record to send first (a key update) goes out with
  // the next read or write.
  if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) return size_t{0};
  return Ended("read", err);
}

Status TlsStream::WriteAll(const char* data, size_t n) {
  while (n > 0) {
    const int chunk = static_cast<int>(std::min<size_t>(n, 1 << 30));
    ERR_clear_error();  // SSL_get_error reads the thread's queue
    const int put = SSL_write(ssl_, data, chunk);
    if (put <= 0) {
      PS_RETURN_IF_ERROR(Retry("write", put));
      continue;
    }
    data += put;
    n -= static_cast<size_t>(put);
  }
  return OkStatus();
}

StatusOr<size_t> TlsStream::WriteSomeOf(const char* data, size_t n) {
  size_t taken = 0;
  while (taken < n) {
    const int chunk = static_cast<int>(std::min<size_t>(n - taken, 1 << 30));
    ERR_clear_error();  // SSL_get_error reads the thread's queue
    const int put = SSL_write(ssl_, data + taken, chunk);
    if (put <= 0) {
      const int err = SSL_get_error(ssl_, put);
      if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) break;
      return Ended("write", err);
    }
    taken += static_cast<size_t>(put);
  }
  return taken;
}

StatusOr<size_t> TlsStream::Gather(
    const struct iovec* iov, int count,
    const std::function<StatusOr<size_t>(const char*, size_t)>& write) {
  size_t taken = 0;
  std::vector<char> small;  // small buffers gathered into one record
  auto flush = [&]() -> StatusOr<bool> {
    if (small.empty()) return true;
    PS_ASSIGN_OR_RETURN(const size_t put, write(small.data(), small.size()));
    taken += put;
    const bool whole = put == small.size();
    small.clear();
    return whole;
  };
  for (int i = 0; i < count; ++i) {
    const auto* base = static_cast<const char*>(iov[i].iov_base);
    const size_t len = iov[i].iov_len;
    if (len < kRecordBytes && small.size() + len <= kRecordBytes) {
      small.insert(small.end(), base, base + len);
      continue;
    }
    PS_ASSIGN_OR_RETURN(const bool whole, flush());
    if (!whole) return taken;
    PS_ASSIGN_OR_RETURN(const size_t put, write(base, len));
    taken += put;
    if (put < len) return taken;
  }
  PS_RETURN_IF_ERROR(flush().status());
  return taken;
}

Status TlsStream::Write(const struct iovec* iov, int count) {
  return Gather(iov, count,
                [this](const char* data, size_t n) -> StatusOr<size_t> {
                  PS_RETURN_IF_ERROR(WriteAll(data, n));
                  return n;
                })
      .status();
}

StatusOr<size_t> TlsStream::WriteNow(const struct iovec* iov, int count) {
  return Gather(iov, count, [this](const char* data, size_t n) { return WriteSomeOf(data, n); });
}

}  // namespace tcp
}  // namespace pstrain
