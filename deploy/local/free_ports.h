// Picks free TCP ports on a loopback address by binding port 0. All sockets
// stay open until every port is chosen, so the ports are distinct; another
// process could still take one before the task binds it (a narrow window the
// launcher accepts: the task then fails and the launcher says so).
#ifndef PSTRAIN_DEPLOY_LOCAL_FREE_PORTS_H_
#define PSTRAIN_DEPLOY_LOCAL_FREE_PORTS_H_

#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {

StatusOr<std::vector<int>> PickFreePorts(const std::string& host, int count);

}  // namespace pstrain

#endif  // PSTRAIN_DEPLOY_LOCAL_FREE_PORTS_H_
