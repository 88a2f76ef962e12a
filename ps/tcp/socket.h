// Socket: one connection of the tensor channel as a ByteStream
// (ps/tcp/tensor_frames.h): TCP, or a local (Unix-domain) socket between
// tasks on one host, on which a file descriptor can travel beside the bytes
// (SCM_RIGHTS: how a shared memory region reaches the ps, shared_region.h).
//
// The descriptor is non-blocking underneath: every wait is a poll, bounded
// by the per-call timeout (no progress for that long) and by the deadline
// (an absolute time, however the bytes trickle in), so a peer sending a
// byte at a time cannot hold a reader for longer than its deadline.
// Not thread-safe: one exchange at a time (Shutdown may come from another
// thread).
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
  // How long data may go unacknowledged before a TCP connection fails
  // (TCP_USER_TIMEOUT).
  static constexpr std::chrono::milliseconds kUnackedTimeout{10000};

  // Takes ownership of a connected socket; makes it non-blocking, and sets
  // TCP_NODELAY and TCP_USER_TIMEOUT on TCP.
  explicit Socket(int fd);
  ~Socket() override;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  // Connects to host:port (a name, an IPv4 or an IPv6 address). Unavailable,
  // naming the address, when no connection can be made within `timeout`.
  static StatusOr<std::unique_ptr<Socket>> Connect(const std::string& host, int port,
                                                   std::chrono::milliseconds timeout);
  // Connects to the local socket `name` ("@..." : Linux's abstract
  // namespace, which belongs to the network namespace). NotFound when
  // there is none such here (another host, or another container);
  // Unavailable when it cannot take one now (its backlog full).
  static StatusOr<std::unique_ptr<Socket>> ConnectLocal(const std::string& name,
                                                        std::chrono::milliseconds timeout);

  // Every later read and write fails with DeadlineExceeded when it makes no
  // progress for `timeout` (0: waits for ever).
  void SetTimeout(std::chrono::milliseconds timeout) { timeout_ = timeout; }
  void SetDeadline(std::chrono::steady_clock::time_point when) override { deadline_ = when; }
  // Waits until the socket is readable (`write`: writable) within the
  // timeout and the deadline; DeadlineExceeded otherwise.
  Status Await(bool write, const char* what);
  Status AwaitData(std::chrono::steady_clock::time_point until) override;
  // Ends both directions: a read or write blocked in another thread returns.
  void Shutdown();
  // Ends this side's writing; the peer reads the end of the stream.
  void CloseWrite();

  Status ReadFull(void* data, size_t n) override;
  StatusOr<size_t> ReadSome(void* data, size_t n) override;
  Status Write(const struct iovec* iov, int count) override;
  Status WriteWithDescriptor(const struct iovec* iov, int count, int fd) override;
  StatusOr<size_t> WriteNow(const struct iovec* iov, int count) override {
    return SendNow(iov, count, -1);
  }
  int TakeDescriptor() override;
  bool PeerGone() override;
  // Whether a byte (or the end of the stream) can be read without waiting.
  bool ReadableNow() const;

  int fd() const { return fd_; }
  bool local() const { return local_; }
  // "127.0.0.1:53122" or "local pid 4242", for logs; "?" when the peer is
  // gone.
  std::string PeerAddress() const;
  // Who the peer is, for per-peer limits: its IP address, or over a local
  // socket its process.
  std::string PeerKey() const;

 private:
  Status Failed(const char* what, int err) const;
  Status Send(const struct iovec* iov, int count, int fd);
  // What the socket takes now of the buffers (the descriptor, when not
  // -1, beside the first byte), without waiting.
  StatusOr<size_t> SendNow(const struct iovec* iov, int count, int fd);
  // One sendmsg of at most IOV_MAX buffers: the bytes sent, 0 when the
  // socket's buffer is full.
  StatusOr<size_t> SendOnce(struct iovec* iov, int count, int fd);

  const int fd_;
  bool local_ = false;
  std::chrono::milliseconds timeout_{0};
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  int received_ = -1;  // owned: the descriptor that came with the last bytes read
};

// The listening side: binds host:port (port 0: a free one) or a local
// name, non-blocking: Accept returns at once.
class Listener {
 public:
  // A backlog deep enough for a burst of connections (the kernel caps it
  // at net.core.somaxconn).
  static constexpr int kBacklog = 4096;
  static StatusOr<std::unique_ptr<Listener>> Listen(const std::string& host, int port);
  // A local socket of a name no other task has: "@pstrain-<pid>-<random>".
  static StatusOr<std::unique_ptr<Listener>> ListenLocal();
  ~Listener();

  int fd() const { return fd_; }
  int port() const { return port_; }
  // The local socket's name ("" over TCP).
  const std::string& name() const { return name_; }
  // The next pending connection; null when none is waiting. Unavailable for
  // a failure other than that (out of descriptors, say).
  StatusOr<std::unique_ptr<Socket>> Accept();

 private:
  Listener(int fd, int port, std::string name) : fd_(fd), port_(port), name_(std::move(name)) {}
  const int fd_;
  const int port_;
  const std::string name_;
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_SOCKET_H_
