// Supervisor: the chief's work, from start to end of a training job.
//
//   Start     wait for every ps; initialize every variable from the seed
//   Monitor   until every worker has finished: log progress, declare workers
//             dead when their heartbeats stop (and alive again when they
//             resume), and in sync mode say what a stalled step waits for
//   Finish    pull the final variables, evaluate them on the test set, write
//             them into the train dir, shut every ps down
//
// Thread-compatible: main calls these in order, from one thread.
#ifndef PSTRAIN_CHIEF_SUPERVISOR_H_
#define PSTRAIN_CHIEF_SUPERVISOR_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/stop_signals.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"
#include "proto/ps.pb.h"
#include "ps/rpc/ps_fleet.h"

namespace pstrain {

struct SupervisorOptions {
  std::string train_dir;
  uint64_t seed = 0;
  int num_workers = 0;
  proto::InitHeader init;  // optimizer, sync config, heartbeat timeout
  std::chrono::seconds startup_timeout{600};
  std::chrono::seconds progress_interval{15};
  std::chrono::milliseconds poll_interval{500};
  std::chrono::duration<double> step_timeout{30};
};

class Supervisor {
 public:
  // Borrows everything; all must outlive the Supervisor.
  Supervisor(nn::Model* model, PsFleet* fleet, const data::ImageDataset* test_set,
             StopNotice* stop, SupervisorOptions options);

  Status Start();
  // Returns when every worker has reported done; Aborted on a stop request.
  Status Monitor();
  // Returns the final test accuracy line's figures.
  Status Finish();

 private:
  // Logs worker liveness changes from ps 0's view of the heartbeats.
  void WatchWorkers(const proto::StatusResponse& coordinator);
  // Sync: logs what a step that has not advanced for step_timeout waits for.
  void WatchSyncStep(const proto::StatusResponse& coordinator);

  nn::Model* const model_;
  PsFleet* const fleet_;
  const data::ImageDataset* const test_set_;
  StopNotice* const stop_;
  const SupervisorOptions options_;

  std::map<int, bool> worker_dead_;  // by worker index
  int64_t last_step_ = -1;
  std::chrono::steady_clock::time_point last_step_change_;
  std::chrono::steady_clock::time_point last_stall_log_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUPERVISOR_H_
