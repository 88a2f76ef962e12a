// InProcessPs: a ps task's store and logic (PsCore) in this process, reached
// through the PsConnection interface without a network: what unit tests of
// the PsFleet, the Trainer and the Supervisor run against. Requests go
// through the same checks as over gRPC (the tensors of an Init or a Push
// under the core's limits), and tensors are copied both ways, as a transport
// would.
//
// Thread-safe, as PsCore is.
#ifndef PSTRAIN_PS_TESTING_IN_PROCESS_PS_H_
#define PSTRAIN_PS_TESTING_IN_PROCESS_PS_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "core/mutex.h"
#include "ps/client/ps_connection.h"
#include "ps/ps_core.h"
#include "ps/variable_store.h"

namespace pstrain {

class InProcessPs : public PsConnection {
 public:
  explicit InProcessPs(int task_index, uint64_t max_bytes = UINT64_MAX);

  // The reason of the latest Shutdown request, "" before one.
  std::string shutdown_reason() const;

  const std::string& name() const override { return name_; }
  Status Init(const proto::InitHeader& header, const NamedTensors& values) override;
  Status PullWithRows(uint64_t fingerprint, const std::vector<std::string>& names,
                      const std::vector<proto::TableKeys>& lookups,
                      std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step,
                      std::chrono::milliseconds wait) override;
  Status PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                   int64_t* step) override;
  StatusOr<proto::PushResponse> Push(const proto::PushHeader& header,
                                     const NamedTensors& grads) override;
  StatusOr<proto::HeartbeatResponse> Heartbeat(int worker, int64_t local_step, float loss) override;
  Status ExportRows(
      uint64_t fingerprint, const std::string& table, bool delta, bool start_deltas,
      const std::function<Status(const proto::ExportRowsResponse&)>& on_block) override;
  StatusOr<proto::ImportRowsResponse> ImportRows(
      uint64_t fingerprint, const std::function<bool(proto::RowBlock*)>& next) override;
  Status FinishRestore(uint64_t fingerprint) override;
  StatusOr<proto::StatusResponse> GetStatus(std::chrono::milliseconds timeout) override;
  StatusOr<proto::StatusResponse> GetReadiness(std::chrono::milliseconds timeout) override;
  Status WorkerDone(int worker, const std::string& failure) override;
  Status SetLiveWorkers(const std::vector<int>& workers) override;
  Status EndTraining(const std::string& reason) override;
  Status Shutdown(const std::string& reason) override;

 private:
  // The tensors as a transport would deliver them: chunked and reassembled
  // under `limits` by the same TensorAssembler as the gRPC service's.
  static StatusOr<std::map<std::string, Tensor>> Deliver(const NamedTensors& tensors,
                                                         const TensorAssembler::Limits& limits);
  // A pull's answer into `out` (copies, as a transport delivers them).
  Status Received(StatusOr<PsCore::PullResult> pulled, std::map<std::string, Tensor>* out,
                  int64_t* step) const;

  const std::string name_;
  VariableStore store_;
  PsCore core_;
  mutable Mutex mu_;
  std::string shutdown_reason_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_TESTING_IN_PROCESS_PS_H_
