// Socket: one TCP connection as a ByteStream (ps/tcp/tensor_frames.h), with
// blocking I/O under a per-call timeout. Not thread-safe: one exchange at a
// time (Shutdown may come from another thread).
#ifndef PSTRAIN_PS_TCP_SOCKET_H_
#define PSTRAIN_PS_TCP_SOCKET_H_

#include <chrono>
#include <memory>
#include <string>

#include "core/status.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {

class Socket : public ByteStream {
 public:
  // How long data may go unacknowledged before the connection fails
  // (TCP_USER_TIMEOUT).
  static constexpr std::chrono::milliseconds kUnackedTimeout{10000};

  // Takes ownership of a connected socket; sets TCP_NODELAY.
  explicit Socket(int fd);
  ~Socket() override;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // Connects to host:port (a name, an IPv4 or an IPv6 address). Unavailable,
  // naming the address, when no connection can be made within `timeout`.
  static StatusOr<std::unique_ptr<Socket>> Connect(const std::string& host, int port,
                                                   std::chrono::milliseconds timeout);

  // Every later read and write fails with DeadlineExceeded when it makes no
  // progress for `timeout` (0: waits for ever).
  void SetTimeout(std::chrono::milliseconds timeout);
  // Ends both directions: a read or write blocked in another thread returns.
  void Shutdown();
  // Ends this side's writing; the peer reads the end of the stream.
  void CloseWrite();

  Status ReadFull(void* data, size_t n) override;
  Status Write(const struct iovec* iov, int count) override;

  int fd() const { return fd_; }
  // "127.0.0.1:53122", for logs; "?" when the peer is gone.
  std::string PeerAddress() const;

 private:
  Status Failed(const char* what, int err) const;

  const int fd_;
};

// The listening side: binds host:port (port 0: a free one).
class Listener {
 public:
  static StatusOr<std::unique_ptr<Listener>> Listen(const std::string& host, int port);
  ~Listener();

  int port() const { return port_; }
  // The next connection; Unavailable once Shutdown was called.
  StatusOr<std::unique_ptr<Socket>> Accept();
  void Shutdown();

 private:
  Listener(int fd, int port) : fd_(fd), port_(port) {}
  const int fd_;
  const int port_;
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_SOCKET_H_
