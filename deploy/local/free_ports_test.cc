#include "deploy/local/free_ports.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "core/unique_fd.h"

namespace pstrain {
namespace {

// Binds 127.0.0.1:port with the given options; returns errno (0: bound).
int TryBind(int port, bool reuse_address, bool reuse_port, UniqueFd* fd) {
  *fd = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const int one = 1;
  if (reuse_address) ::setsockopt(fd->get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (reuse_port) ::setsockopt(fd->get(), SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  return ::bind(fd->get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 ? 0 : errno;
}

// A reserved port cannot be taken by another process's plain bind (nor one
// with SO_REUSEADDR, as most servers set), yet a gRPC server (SO_REUSEPORT,
// the same user) binds and listens on it while the reservation holds.
TEST(ReservedPorts, HeldAgainstOthersYetTheTaskBindsIt) {
  auto reserved = ReservedPorts::Reserve("127.0.0.1", 3);
  ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
  const std::vector<int> ports = reserved->ports();
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(std::set<int>(ports.begin(), ports.end()).size(), 3u) << "distinct";
  UniqueFd other;
  EXPECT_EQ(TryBind(ports[0], false, false, &other), EADDRINUSE);
  EXPECT_EQ(TryBind(ports[0], true, false, &other), EADDRINUSE);
  UniqueFd task;
  ASSERT_EQ(TryBind(ports[1], true, true, &task), 0) << std::strerror(errno);
  EXPECT_EQ(::listen(task.get(), 8), 0) << std::strerror(errno);
}

TEST(ReservedPorts, ReleasedWhenDestroyed) {
  int port = 0;
  {
    auto reserved = ReservedPorts::Reserve("127.0.0.1", 1);
    ASSERT_TRUE(reserved.ok()) << reserved.status().ToString();
    port = reserved->ports()[0];
  }
  UniqueFd fd;
  EXPECT_EQ(TryBind(port, false, false, &fd), 0);
}

TEST(ReservedPorts, RefusesAHostThatIsNotAnIpv4Address) {
  auto reserved = ReservedPorts::Reserve("localhost", 1);
  ASSERT_FALSE(reserved.ok());
  EXPECT_EQ(reserved.status().code(), Code::kInvalidArgument) << reserved.status().ToString();
}

}  // namespace
}  // namespace pstrain
