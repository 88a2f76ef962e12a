#include "ps/tcp/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "ps/tcp/iovec_cursor.h"

namespace pstrain {
namespace tcp {

namespace {

using Clock = std::chrono::steady_clock;

std::string ErrnoText(int err) { return std::strerror(err); }

void SetNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK); }

// Milliseconds poll may wait: the least of the timeout (0: none) and what
// is left to the deadline; -1 for ever.
int PollMillis(std::chrono::milliseconds timeout, Clock::time_point deadline) {
  int64_t ms = timeout.count() > 0 ? timeout.count() : -1;
  if (deadline != Clock::time_point::max()) {
    // Rounded up, so as not to wake just before the deadline; 0 once past.
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline - Clock::now()).count();
    const int64_t left = ns <= 0 ? 0 : (ns + 999999) / 1000000;
    ms = ms < 0 ? left : std::min(left, ms);
  }
  return static_cast<int>(std::min<int64_t>(ms, INT_MAX));
}

// Connects the non-blocking fd to addr within timeout.
bool ConnectWithin(int fd, const struct sockaddr* addr, socklen_t len,
                   std::chrono::milliseconds timeout, int* err) {
  // (A local socket whose backlog is full answers EAGAIN: a failure, not a
  // connection in progress.)
  int rc = connect(fd, addr, len);
  if (rc != 0 && errno == EINPROGRESS) {
    struct pollfd p = {fd, POLLOUT, 0};
    rc = poll(&p, 1, static_cast<int>(timeout.count()));
    if (rc == 1) {
      socklen_t size = sizeof(*err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &size);
      rc = *err == 0 ? 0 : -1;
    } else {
      *err = rc == 0 ? ETIMEDOUT : errno;
      rc = -1;
    }
  } else if (rc != 0) {
    *err = errno;
  }
  return rc == 0;
}

// The abstract-namespace address of a local socket named "@...".
socklen_t LocalAddress(const std::string& name, struct sockaddr_un* addr) {
  *addr = {};
  addr->sun_family = AF_UNIX;
  const size_t n = std::min(name.size() - 1, sizeof(addr->sun_path) - 1);
  addr->sun_path[0] = '\0';
  std::memcpy(addr->sun_path + 1, name.data() + 1, n);
  return static_cast<socklen_t>(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

}  // namespace

Socket::Socket(int fd) : fd_(fd) {
  SetNonBlocking(fd_);
  struct sockaddr_storage self = {};
  socklen_t len = sizeof(self);
  local_ =
      getsockname(fd_, reinterpret_cast<sockaddr*>(&self), &len) == 0 && self.ss_family == AF_UNIX;
  if (local_) return;
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // A peer that acknowledges nothing of what was sent for this long is
  // gone (a cut link, a dead host): the connection fails instead of
  // retransmitting for minutes, and the caller backs off and reconnects. A
  // request waiting for its reply (a sync pull waiting for the step) has
  // nothing unacknowledged of its own: keepalive probes every 2 s give it
  // some, which a live peer acknowledges however long the wait, and a cut
  // link leaves unacknowledged, so a waiting caller learns of the cut too.
  const unsigned int unacked_ms = static_cast<unsigned int>(kUnackedTimeout.count());
  setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &unacked_ms, sizeof(unacked_ms));
  const int probe_secs = 2;
  setsockopt(fd_, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPIDLE, &probe_secs, sizeof(probe_secs));
  setsockopt(fd_, IPPROTO_TCP, TCP_KEEPINTVL, &probe_secs, sizeof(probe_secs));
}

Socket::~Socket() {
  if (received_ >= 0) close(received_);
  close(fd_);
}

StatusOr<std::unique_ptr<Socket>> Socket::Connect(const std::string& host, int port,
                                                  std::chrono::milliseconds timeout) {
  const std::string where = host + ":" + std::to_string(port);
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* found = nullptr;
  const int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (gai != 0) return Unavailable("tensor channel " + where + ": " + gai_strerror(gai));
  int err = 0;
  int fd = -1;
  for (struct addrinfo* a = found; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    if (ConnectWithin(fd, a->ai_addr, a->ai_addrlen, timeout, &err)) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) return Unavailable("tensor channel " + where + ": " + ErrnoText(err));
  return std::make_unique<Socket>(fd);
}

StatusOr<std::unique_ptr<Socket>> Socket::ConnectLocal(const std::string& name,
                                                       std::chrono::milliseconds timeout) {
  if (name.size() < 2 || name[0] != '@') {
    return InvalidArgument("local socket name '" + name + "' does not start with @");
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Unavailable("tensor channel " + name + ": " + ErrnoText(errno));
  struct sockaddr_un addr;
  const socklen_t len = LocalAddress(name, &addr);
  int err = 0;
  if (!ConnectWithin(fd, reinterpret_cast<struct sockaddr*>(&addr), len, timeout, &err)) {
    close(fd);
    const std::string why = "tensor channel " + name + ": " + ErrnoText(err);
    return err == ECONNREFUSED || err == ENOENT ? NotFound(why) : Unavailable(why);
  }
  return std::make_unique<Socket>(fd);
}

std::string Socket::PeerAddress() const {
  if (local_) {
    struct ucred cred = {};
    socklen_t len = sizeof(cred);
    if (getsockopt(fd_, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return "?";
    return "local pid " + std::to_string(cred.pid);
  }
  sockaddr_storage addr;
  socklen_t len = sizeof(addr);
  if (getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return "?";
  char host[INET6_ADDRSTRLEN] = "?";
  int port = 0;
  if (addr.ss_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
    port = ntohs(in6->sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

std::string Socket::PeerKey() const {
  const std::string address = PeerAddress();
  if (local_) return address;
  return address.substr(0, address.rfind(':'));
}

void Socket::Shutdown() { shutdown(fd_, SHUT_RDWR); }

void Socket::CloseWrite() { shutdown(fd_, SHUT_WR); }

Status Socket::Failed(const char* what, int err) const {
  if (err == EAGAIN || err == EWOULDBLOCK || err == ETIMEDOUT) {
    return DeadlineExceeded(std::string("tensor channel: ") + what + " timed out");
  }
  return Unavailable(std::string("tensor channel: ") + what + ": " + ErrnoText(err));
}

Status Socket::Await(bool write, const char* what) {
  for (;;) {
    struct pollfd p = {fd_, static_cast<short>(write ? POLLOUT : POLLIN), 0};
    const int ready = poll(&p, 1, PollMillis(timeout_, deadline_));
    if (ready > 0) return OkStatus();  // readable, writable, or an error to read
    if (ready < 0 && errno == EINTR) continue;
    return Failed(what, ready == 0 ? ETIMEDOUT : errno);
  }
}

Status Socket::AwaitData(std::chrono::steady_clock::time_point until) {
  const auto deadline = deadline_;
  deadline_ = std::min(deadline_, until);
  const Status s = Await(/*write=*/false, "wait for a request");
  deadline_ = deadline;
  return s;
}

bool Socket::PeerGone() {
  struct pollfd p = {fd_, POLLRDHUP, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

bool Socket::ReadableNow() const {
  struct pollfd p = {fd_, POLLIN | POLLRDHUP, 0};
  return poll(&p, 1, 0) == 1;
}

int Socket::TakeDescriptor() { return std::exchange(received_, -1); }

StatusOr<size_t> Socket::ReadSome(void* data, size_t n) {
  // One read, keeping a descriptor that came with the bytes.
  struct iovec iov = {data, n};
  struct msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
  if (local_) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
  }
  ssize_t got;
  do {
    got = recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC);
  } while (got < 0 && errno == EINTR);
  if (got == 0 && n > 0) return Unavailable("tensor channel: the peer closed the connection");
  if (got < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return Failed("read", errno);
  }
  // The descriptor kept is the one that came with these bytes: one left
  // untaken from an earlier read is closed, so that it cannot pass for
  // this one's. Of several that came along the last is kept, the rest
  // closed (a peer cannot make this process hold more than one).
  if (got > 0 && received_ >= 0) {
    close(received_);
    received_ = -1;
  }
  for (struct cmsghdr* c = local_ ? CMSG_FIRSTHDR(&msg) : nullptr; c != nullptr;
       c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
      if (received_ >= 0) close(received_);
      received_ = fd;
    }
  }
  return static_cast<size_t>(got);
}

Status Socket::ReadFull(void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    PS_ASSIGN_OR_RETURN(const size_t got, ReadSome(p, n));
    if (got == 0) {
      PS_RETURN_IF_ERROR(Await(/*write=*/false, "read"));  // the bytes still to come
      continue;
    }
    p += got;
    n -= got;
  }
  return OkStatus();
}

StatusOr<size_t> Socket::SendOnce(struct iovec* iov, int count, int fd) {
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  struct msghdr msg = {};
  msg.msg_iov = iov;
  msg.msg_iovlen = std::min(count, IOV_MAX);
  if (fd >= 0) {  // beside the first byte only
    msg.msg_control = control;
    msg.msg_controllen = sizeof(control);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  for (;;) {
    const ssize_t sent = sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (sent >= 0) return static_cast<size_t>(sent);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return Failed("write", errno);
  }
}

StatusOr<size_t> Socket::SendNow(const struct iovec* iov, int count, int fd) {
  // Most writes go whole in one call, from the caller's buffers.
  PS_ASSIGN_OR_RETURN(size_t sent, SendOnce(const_cast<struct iovec*>(iov), count, fd));
  if (sent == 0 || sent == IovecBytes(iov, count)) return sent;
  IovecCursor left(iov, count);
  left.Advance(sent);
  while (!left.empty()) {
    PS_ASSIGN_OR_RETURN(const size_t more, SendOnce(left.data(), left.count(), -1));
    if (more == 0) break;
    sent += more;
    left.Advance(more);
  }
  return sent;
}

Status Socket::Send(const struct iovec* iov, int count, int fd) {
  PS_ASSIGN_OR_RETURN(const size_t sent, SendNow(iov, count, fd));
  if (sent == IovecBytes(iov, count)) return OkStatus();
  IovecCursor left(iov, count);
  left.Advance(sent);
  if (sent > 0) fd = -1;
  for (;;) {
    PS_RETURN_IF_ERROR(Await(/*write=*/true, "write"));
    PS_ASSIGN_OR_RETURN(const size_t more, SendNow(left.data(), left.count(), fd));
    if (more > 0) fd = -1;
    left.Advance(more);
    if (left.empty()) return OkStatus();
  }
}

Status Socket::Write(const struct iovec* iov, int count) { return Send(iov, count, -1); }

Status Socket::WriteWithDescriptor(const struct iovec* iov, int count, int fd) {
  if (!local_) return Unimplemented("a TCP connection cannot pass descriptors");
  return Send(iov, count, fd);
}

StatusOr<std::unique_ptr<Listener>> Listener::Listen(const std::string& host, int port) {
  const std::string where = host + ":" + std::to_string(port);
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  struct addrinfo* found = nullptr;
  const int gai = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (gai != 0) {
    return Unavailable("tensor channel cannot listen on " + where + ": " + gai_strerror(gai));
  }
  const int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                        found->ai_protocol);
  int one = 1;
  const bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
                  bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, kBacklog) == 0;
  const int err = errno;
  freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) close(fd);
    return Unavailable("tensor channel cannot listen on " + where + ": " + ErrnoText(err));
  }
  struct sockaddr_storage bound = {};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<struct sockaddr*>(&bound), &len);
  const int bound_port = bound.ss_family == AF_INET6
                             ? ntohs(reinterpret_cast<struct sockaddr_in6*>(&bound)->sin6_port)
                             : ntohs(reinterpret_cast<struct sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<Listener>(new Listener(fd, bound_port, ""));
}

StatusOr<std::unique_ptr<Listener>> Listener::ListenLocal() {
  std::random_device random;
  const std::string name = "@pstrain-" + std::to_string(getpid()) + "-" +
                           std::to_string((static_cast<uint64_t>(random()) << 32) | random());
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  struct sockaddr_un addr;
  const socklen_t len = LocalAddress(name, &addr);
  const bool ok = fd >= 0 && bind(fd, reinterpret_cast<struct sockaddr*>(&addr), len) == 0 &&
                  listen(fd, kBacklog) == 0;
  if (!ok) {
    const int err = errno;
    if (fd >= 0) close(fd);
    return Unavailable("tensor channel cannot listen on " + name + ": " + ErrnoText(err));
  }
  return std::unique_ptr<Listener>(new Listener(fd, 0, name));
}

Listener::~Listener() { close(fd_); }

StatusOr<std::unique_ptr<Socket>> Listener::Accept() {
  for (;;) {
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return std::make_unique<Socket>(fd);
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return std::unique_ptr<Socket>();
    return Unavailable("tensor channel: accept: " + ErrnoText(errno));
  }
}

}  // namespace tcp
}  // namespace pstrain
