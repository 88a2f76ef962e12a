// LoopbackPs: a real ps (store, core and servers) on a free loopback port
// (port 0) in this process, and a client to it: what the ps and worker unit
// tests talk gRPC (and the tensor channel) to.
#ifndef PSTRAIN_PS_TESTING_LOOPBACK_PS_H_
#define PSTRAIN_PS_TESTING_LOOPBACK_PS_H_

#include <memory>
#include <string>

#include "core/stop_signals.h"
#include "ps/ps_core.h"
#include "ps/rpc/ps_client.h"
#include "ps/server/ps_server.h"
#include "ps/tcp/tensor_channel_server.h"
#include "ps/variable_store.h"

namespace pstrain {

struct LoopbackPs {
  // tensor_port as PsServer::Start takes it: 0 adds the tensor channel on a
  // free port, -1 leaves tensors to gRPC.
  Status Start(int tensor_port = 0, const tcp::ChannelLimits& limits = {}) {
    PS_ASSIGN_OR_RETURN(server, PsServer::Start(&core, "127.0.0.1:0", tensor_port, &limits));
    client = std::make_unique<PsClient>(0, "127.0.0.1:" + std::to_string(server->port()));
    return OkStatus();
  }

  StopNotice shutdown_requested;
  VariableStore store;
  PsCore core{0, PsCore::NewIncarnation(), &store,
              [this](const std::string& reason) { shutdown_requested.Notify(reason); }};
  std::unique_ptr<PsServer> server;
  std::unique_ptr<PsClient> client;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_TESTING_LOOPBACK_PS_H_
