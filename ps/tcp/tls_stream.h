// TlsStream: the tensor channel over TLS (core/tls.h) on a connected
// socket, as a ByteStream. The ps's side requires the client's certificate
// and checks it against the CA; the client's checks the ps's against the CA
// and the host it dialed. Not thread-safe, as Socket; Shutdown of the socket
// underneath ends it from another thread.
#ifndef PSTRAIN_PS_TCP_TLS_STREAM_H_
#define PSTRAIN_PS_TCP_TLS_STREAM_H_

#include <openssl/ssl.h>

#include <functional>
#include <memory>
#include <string>

#include "core/status.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {

class TlsStream : public ByteStream {
 public:
  // The client's handshake on `socket` (borrowed: it outlives the stream),
  // under the socket's timeout and deadline. PermissionDenied naming the
  // reason (no certificate, one the CA did not sign, an expired one, a host
  // it does not name) when the peer is refused or refuses.
  static StatusOr<std::unique_ptr<TlsStream>> Connect(SSL_CTX* ctx, Socket* socket,
                                                      const std::string& host);
  // The ps's side without waiting: a stream whose handshake Advance moves
  // on as far as the socket allows, for an event loop to drive.
  static StatusOr<std::unique_ptr<TlsStream>> BeginAccept(SSL_CTX* ctx, Socket* socket);
  enum class Progress { kDone, kWantRead, kWantWrite };
  // What the handshake waits for now (kDone: the stream is ready), or
  // PermissionDenied naming the reason, as Connect's.
  StatusOr<Progress> Advance();
  ~TlsStream() override;

  // The peer certificate's subject ("/CN=worker0"), for logs.
  std::string peer() const;

  Status ReadFull(void* data, size_t n) override;
  StatusOr<size_t> ReadSome(void* data, size_t n) override;
  void SetDeadline(std::chrono::steady_clock::time_point when) override {
    socket_->SetDeadline(when);
  }
  Status AwaitData(std::chrono::steady_clock::time_point until) override;
  bool PeerGone() override { return socket_->PeerGone(); }
  // Whether bytes already read from the socket wait to be taken.
  bool pending() const { return SSL_pending(ssl_) > 0; }
  // Small buffers are gathered into records of up to 16 KiB; large ones go
  // out from where they are.
  Status Write(const struct iovec* iov, int count) override;
  // As Write, gathering the same way, until the socket's buffer is full:
  // a record begun then is taken whole by the next write of the same
  // bytes (OpenSSL's partial writes, from a buffer that may move).
  StatusOr<size_t> WriteNow(const struct iovec* iov, int count) override;

 private:
  TlsStream(SSL* ssl, Socket* socket) : ssl_(ssl), socket_(socket) {}
  // A stream whose handshake is yet to be made: as the client of `host`,
  // or as the server when null.
  static StatusOr<std::unique_ptr<TlsStream>> Begin(SSL_CTX* ctx, Socket* socket,
                                                    const std::string* host);
  Status WriteAll(const char* data, size_t n);
  // Writes records of [data, data + n) until the socket's buffer is full;
  // the bytes of the records written.
  StatusOr<size_t> WriteSomeOf(const char* data, size_t n);
  // The buffers' bytes in the order they are written: small ones gathered
  // into records of up to 16 KiB, large ones from where they are.
  // `write` gets each piece and says how many of its bytes it took; the
  // walk stops at the first it did not take whole.
  static StatusOr<size_t> Gather(const struct iovec* iov, int count,
                                 const std::function<StatusOr<size_t>(const char*, size_t)>& write);
  // After an SSL call returned `ret`: waits for the socket when OpenSSL
  // wants to read or write (OkStatus: call again), else the error.
  Status Retry(const char* what, int ret);

  SSL* const ssl_;
  Socket* const socket_;  // borrowed; non-blocking: every wait is the socket's
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_TLS_STREAM_H_
