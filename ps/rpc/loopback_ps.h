// LoopbackPs: a real ps server on a free loopback port (port 0) in this
// process, and a client to it: what the ps and worker unit tests talk gRPC to.
#ifndef PSTRAIN_PS_RPC_LOOPBACK_PS_H_
#define PSTRAIN_PS_RPC_LOOPBACK_PS_H_

#include <memory>
#include <string>

#include "ps/ps_server.h"
#include "ps/rpc/ps_client.h"

namespace pstrain {

struct LoopbackPs {
  Status Start() {
    PS_ASSIGN_OR_RETURN(server, PsServer::Start("127.0.0.1:0", 0, &shutdown_requested));
    client = std::make_unique<PsClient>(0, "127.0.0.1:" + std::to_string(server->port()));
    return OkStatus();
  }

  StopNotice shutdown_requested;
  std::unique_ptr<PsServer> server;
  std::unique_ptr<PsClient> client;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_LOOPBACK_PS_H_
