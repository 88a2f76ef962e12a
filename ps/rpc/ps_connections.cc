#include "ps/rpc/ps_connections.h"

#include <glog/logging.h>

#include "ps/tcp/arena_memory.h"

namespace pstrain {

PsConnections ConnectToPs(const cluster::ClusterSpec& spec, const PsClientOptions& options,
                          const std::vector<cluster::VariableInfo>* trainer_variables) {
  std::vector<std::unique_ptr<PsClient>> clients;
  std::vector<bool> local;
  bool any_local = false;
  for (int i = 0; i < spec.NumTasks("ps"); ++i) {
    clients.push_back(std::make_unique<PsClient>(i, spec.Address("ps", i), options));
    local.push_back(clients.back()->CanUseArena());
    any_local = any_local || local.back();
  }
  PsConnections made;
  if (trainer_variables != nullptr && any_local) {
    auto arena = tcp::ArenaMemory::Create(*trainer_variables, local);
    if (arena.ok()) {
      for (size_t i = 0; i < clients.size(); ++i) {
        if (local[i]) clients[i]->set_arena((*arena)->region());
      }
      made.memory = std::move(arena).value();
    } else {
      LOG(WARNING) << "no arena in shared memory (" << arena.status().ToString()
                   << "): tensors go through each connection's region";
    }
  }
  for (auto& c : clients) made.connections.push_back(std::move(c));
  return made;
}

std::unique_ptr<PsFleet> ConnectFleet(const cluster::ClusterSpec& spec, PsFleet::Layout layout,
                                      const PsClientOptions& options, bool trainer) {
  PsConnections made = ConnectToPs(spec, options, trainer ? &layout.variables : nullptr);
  return std::make_unique<PsFleet>(std::move(made.connections), std::move(layout),
                                   std::move(made.memory));
}

}  // namespace pstrain
