#include "deploy/local/free_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace pstrain {

StatusOr<ReservedPorts> ReservedPorts::Reserve(const std::string& host, int count) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgument("not an IPv4 address: " + host);
  }
  ReservedPorts out;
  for (int i = 0; i < count; ++i) {
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return Unavailable(std::string("socket: ") + std::strerror(errno));
    // SO_REUSEPORT alone, not SO_REUSEADDR: a socket with SO_REUSEADDR could
    // otherwise bind the port beside this one, which never listens.
    const int one = 1;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
      return Unavailable(std::string("SO_REUSEPORT: ") + std::strerror(errno));
    }
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return Unavailable("bind " + host + ": " + std::strerror(errno));
    }
    out.ports_.push_back(ntohs(addr.sin_port));
    out.sockets_.push_back(std::move(fd));
  }
  return out;
}

}  // namespace pstrain
