#include "bench/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "core/unique_fd.h"

namespace pstrain {
namespace bench {

StatusOr<std::string> HttpGet(const std::string& host, int port, const std::string& path,
                              std::chrono::milliseconds timeout) {
  const std::string what = "GET http://" + host + ":" + std::to_string(port) + path;
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Unavailable(what + ": no socket");
  struct timeval tv = {static_cast<time_t>(timeout.count() / 1000),
                       static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgument(what + ": not an IPv4 address");
  }
  if (connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Unavailable(what + ": cannot connect");
  }
  const std::string request =
      "GET " + path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n";
  if (send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return Unavailable(what + ": the request did not go out");
  }
  std::string response;
  char buf[65536];
  for (;;) {
    const ssize_t n = recv(fd.get(), buf, sizeof(buf), 0);
    if (n == 0) break;
    if (n < 0) return DeadlineExceeded(what + ": no whole answer in time");
    response.append(buf, static_cast<size_t>(n));
  }
  if (response.compare(0, 12, "HTTP/1.1 200") != 0) {
    return Unavailable(what + ": " + response.substr(0, response.find('\r')));
  }
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? std::string() : response.substr(body + 4);
}

StatusOr<int> FreePortNow(const std::string& host) {
  UniqueFd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  socklen_t len = sizeof(addr);
  if (!fd.valid() || inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1 ||
      bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Unavailable("no free port on " + host);
  }
  return static_cast<int>(ntohs(addr.sin_port));
}

}  // namespace bench
}  // namespace pstrain
