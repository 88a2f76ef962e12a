// ReservedPorts: free TCP ports on an IPv4 address, held until destroyed.
//
// Each port is bound (port 0, so the kernel picks it) with SO_REUSEPORT and
// never listened on. Until the reservation is destroyed, no other process
// can bind the port unless it too sets SO_REUSEPORT as the same user; gRPC
// servers do, so a task started with the port binds it while the launcher
// still holds it, and nothing can take it in between. A socket that only
// binds receives no connections: they all go to the task's listening one.
//
// Thread-compatible.
#ifndef PSTRAIN_DEPLOY_LOCAL_FREE_PORTS_H_
#define PSTRAIN_DEPLOY_LOCAL_FREE_PORTS_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "core/unique_fd.h"

namespace pstrain {

class ReservedPorts {
 public:
  // `count` distinct ports on `host` (an IPv4 address). InvalidArgument for
  // a host that is not one; Unavailable when the ports cannot be had.
  static StatusOr<ReservedPorts> Reserve(const std::string& host, int count);

  ReservedPorts() = default;
  ReservedPorts(ReservedPorts&&) = default;
  ReservedPorts& operator=(ReservedPorts&&) = default;

  const std::vector<int>& ports() const { return ports_; }

 private:
  std::vector<UniqueFd> sockets_;
  std::vector<int> ports_;
};

}  // namespace pstrain

#endif  // PSTRAIN_DEPLOY_LOCAL_FREE_PORTS_H_
