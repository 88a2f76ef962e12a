// PsFleet: the model's variables as they lie across every ps task.
//
// Stitches axis-0 shards back into whole variables on pull and cuts whole
// gradients into shards on push, talking to the ps tasks in parallel. Both
// the workers and the chief use it, each computing the same Placement.
//
// Thread-compatible: one thread at a time calls a PsFleet.
#ifndef PSTRAIN_PS_RPC_PS_FLEET_H_
#define PSTRAIN_PS_RPC_PS_FLEET_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "cluster/placement.h"
#include "core/status.h"
#include "core/stop_signals.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/rpc/ps_client.h"

namespace pstrain {

class PsFleet {
 public:
  // variables: the model's variables in model order; placement was computed
  // from them. chunk_bytes sizes every tensor message.
  PsFleet(const cluster::ClusterSpec& spec, std::vector<cluster::VariableInfo> variables,
          cluster::Placement placement, uint32_t chunk_bytes = kDefaultChunkBytes);

  // Computes the placement of `variables` over the spec's ps tasks with the
  // --placement and --min_slice_bytes flags; slots_per_variable is the
  // optimizer's slot count.
  static StatusOr<std::unique_ptr<PsFleet>> CreateFromFlags(
      const cluster::ClusterSpec& spec, const std::vector<std::pair<std::string, Shape>>& variables,
      int slots_per_variable);

  int num_ps() const { return static_cast<int>(clients_.size()); }
  const cluster::Placement& placement() const { return placement_; }
  PsClient* client(int ps) { return clients_[ps].get(); }

  // Blocks until every ps answers (require_ready: and holds variables under
  // our placement), logging every few seconds which ps it waits for and why.
  // Aborted when `stop` is notified first, DeadlineExceeded after `timeout`.
  Status WaitForPs(bool require_ready, const StopNotice* stop, std::chrono::seconds timeout);

  // Sends every variable's initial value (model order) to the ps tasks that
  // own its shards; ps 0 holds global_step.
  Status InitVariables(const std::vector<Tensor>& values, const proto::OptimizerConfig& optimizer,
                       int64_t global_step);
  // Pulls every variable, whole, in model order. global_step may be null.
  Status PullVariables(std::vector<Tensor>* values, int64_t* global_step);
  // Pushes one gradient per variable (model order); ps 0 counts the step.
  // Returns global_step after the push.
  StatusOr<int64_t> PushGradients(const std::vector<Tensor>& grads, int worker);
  // The status of ps 0, which keeps global_step and the finished workers.
  StatusOr<proto::StatusResponse> CoordinatorStatus();
  Status ShutdownAll(const std::string& reason);

 private:
  // Runs fn(ps) for every ps in parallel; returns the first error.
  Status ForEachPs(const std::function<Status(int ps)>& fn);

  std::vector<cluster::VariableInfo> variables_;
  cluster::Placement placement_;
  std::vector<std::unique_ptr<PsClient>> clients_;
  std::vector<std::vector<const cluster::Shard*>> shards_by_ps_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_PS_FLEET_H_
