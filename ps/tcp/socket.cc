#include "ps/tcp/socket.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace pstrain {
namespace tcp {

namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

// Connects fd to addr within timeout (a non-blocking connect, then poll).
bool ConnectWithin(int fd, const struct addrinfo* addr, std::chrono::milliseconds timeout,
                   int* err) {
  const int flags = fcntl(fd, F_GETFL, 0);
  fcntl(fd, F_SETFL, flags | O_NONBLOCK);
  int rc = connect(fd, addr->ai_addr, addr->ai_addrlen);
  if (rc != 0 && errno == EINPROGRESS) {
    struct pollfd p = {fd, POLLOUT, 0};
    rc = poll(&p, 1, static_cast<int>(timeout.count()));
    if (rc == 1) {
      socklen_t len = sizeof(*err);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &len);
      rc = *err == 0 ? 0 : -1;
    } else {
      *err = rc == 0 ? ETIMEDOUT : errno;
      rc = -1;
    }
  } else if (rc != 0) {
    *err = errno;
  }
  fcntl(fd, F_SETFL, flags);
  return rc == 0;
}

}  // namespace

Socket::Socket(int fd) : fd_(fd) {
  int one = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // A peer that acknowledges nothing of what was sent for this long is
  // gone (a cut link, a dead host): the connection fails instead of
  // retransmitting for minutes, and the caller backs off and reconnects. A
  // request waiting for its reply (a sync pull waiting for the step) has
  // nothing unacknowledged and is not affected.
  const unsigned int unacked_ms = static_cast<unsigned int>(kUnackedTimeout.count());
  setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &unacked_ms, sizeof(unacked_ms));
}

Socket::~Socket() { close(fd_); }

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
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    if (ConnectWithin(fd, a, timeout, &err)) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0) return Unavailable("tensor channel " + where + ": " + ErrnoText(err));
  return std::make_unique<Socket>(fd);
}

void Socket::SetTimeout(std::chrono::milliseconds timeout) {
  struct timeval tv;
  tv.tv_sec = timeout.count() / 1000;
  tv.tv_usec = (timeout.count() % 1000) * 1000;
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

std::string Socket::PeerAddress() const {
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

void Socket::Shutdown() { shutdown(fd_, SHUT_RDWR); }

void Socket::CloseWrite() { shutdown(fd_, SHUT_WR); }

Status Socket::Failed(const char* what, int err) const {
  if (err == EAGAIN || err == EWOULDBLOCK) {
    return DeadlineExceeded(std::string("tensor channel: ") + what + " timed out");
  }
  return Unavailable(std::string("tensor channel: ") + what + ": " + ErrnoText(err));
}

Status Socket::ReadFull(void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = recv(fd_, p, n, 0);
    if (got == 0) return Unavailable("tensor channel: the peer closed the connection");
    if (got < 0) {
      if (errno == EINTR) continue;
      return Failed("read", errno);
    }
    p += got;
    n -= static_cast<size_t>(got);
  }
  return OkStatus();
}

Status Socket::Write(const struct iovec* iov, int count) {
  std::vector<struct iovec> left(iov, iov + count);
  size_t first = 0;
  while (first < left.size()) {
    struct msghdr msg = {};
    msg.msg_iov = left.data() + first;
    msg.msg_iovlen = std::min<size_t>(left.size() - first, IOV_MAX);
    const ssize_t sent = sendmsg(fd_, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return Failed("write", errno);
    }
    size_t done = static_cast<size_t>(sent);
    while (first < left.size() && done >= left[first].iov_len) {
      done -= left[first].iov_len;
      ++first;
    }
    if (done > 0) {
      left[first].iov_base = static_cast<char*>(left[first].iov_base) + done;
      left[first].iov_len -= done;
    }
  }
  return OkStatus();
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
  const int fd = socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  int one = 1;
  const bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
                  bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, 128) == 0;
  const int err = errno;
  freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) close(fd);
    return Unavailable("tensor channel cannot listen on " + where + ": " + ErrnoText(err));
  }
  struct sockaddr_storage bound = {};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<struct sockaddr*>(&bound), &len);
  const int bound_port =
      bound.ss_family == AF_INET6
          ? ntohs(reinterpret_cast<struct sockaddr_in6*>(&bound)->sin6_port)
          : ntohs(reinterpret_cast<struct sockaddr_in*>(&bound)->sin_port);
  return std::unique_ptr<Listener>(new Listener(fd, bound_port));
}

Listener::~Listener() { close(fd_); }

StatusOr<std::unique_ptr<Socket>> Listener::Accept() {
  for (;;) {
    const int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) return std::make_unique<Socket>(fd);
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return Unavailable("tensor channel: accept: " + ErrnoText(errno));
  }
}

void Listener::Shutdown() { shutdown(fd_, SHUT_RDWR); }

}  // namespace tcp
}  // namespace pstrain
