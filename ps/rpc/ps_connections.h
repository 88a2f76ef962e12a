// The connections a task's main makes and hands to its PsFleet
// (ps/client/ps_fleet.h): a PsClient per ps task of the cluster spec, over
// gRPC and the tensor channel, and for a trainer the memory its tensors live
// in (an arena shared with the ps tasks on this host that can take tensors
// through shared memory, ps/tcp/arena_memory.h).
#ifndef PSTRAIN_PS_RPC_PS_CONNECTIONS_H_
#define PSTRAIN_PS_RPC_PS_CONNECTIONS_H_

#include <memory>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "ps/client/ps_connection.h"
#include "ps/client/ps_fleet.h"
#include "ps/client/tensor_memory.h"
#include "ps/rpc/ps_client.h"

namespace pstrain {

struct PsConnections {
  std::vector<std::unique_ptr<PsConnection>> connections;  // ps task order
  std::unique_ptr<TensorMemory> memory;                    // null: ordinary memory
};

// Clients of every ps task of `spec`. With `trainer_variables` (a trainer's
// variables, in model order), also an arena for them when a ps on this host
// can use one, handed to those ps tasks' clients; where the arena cannot be
// made, a warning says why and memory stays null.
PsConnections ConnectToPs(const cluster::ClusterSpec& spec, const PsClientOptions& options,
                          const std::vector<cluster::VariableInfo>* trainer_variables = nullptr);

// A fleet over ConnectToPs' connections, for `layout`; with `trainer`, its
// VariableBuffers in an arena where one can be made.
std::unique_ptr<PsFleet> ConnectFleet(const cluster::ClusterSpec& spec, PsFleet::Layout layout,
                                      const PsClientOptions& options = {}, bool trainer = false);

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_PS_CONNECTIONS_H_
