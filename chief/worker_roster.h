// WorkerRoster: what the chief knows of each worker, from ps:0's record of
// their heartbeats and WorkerDone calls (proto::StatusResponse::workers).
//
// A worker is
//   done     once it reported WorkerDone;
//   dead     when it is not done and its last heartbeat is older than the
//            heartbeat timeout (it comes back with its next heartbeat);
//   live     otherwise, including a worker not heard from yet: it can still
//            push, so a synchronous step may count on it.
// A worker that reported a failure (WorkerDone with one) is done, and its
// failure ends the job (the chief's call). A worker ps:0 has never heard
// from is live but never_heard_from() names it.
// The job is over when no worker is live and at least one finished: the
// rest are dead, and waiting for them would hang the job as TensorFlow's
// did. While every worker is dead and none finished, training waits (a
// restarted worker rejoins).
//
// Thread-compatible: the supervisor's thread calls it.
#ifndef PSTRAIN_CHIEF_WORKER_ROSTER_H_
#define PSTRAIN_CHIEF_WORKER_ROSTER_H_

#include <string>
#include <vector>

#include "proto/ps.pb.h"

namespace pstrain {

class WorkerRoster {
 public:
  WorkerRoster(int num_workers, double heartbeat_timeout_secs);

  enum class State { kLive, kDead, kDone };

  // Takes ps:0's latest view; logs each worker declared dead or back.
  void Update(const proto::StatusResponse& coordinator);

  State state(int worker) const { return states_[worker]; }
  // Workers in `state`, in index order.
  std::vector<int> InState(State state) const;
  // No worker can still push and at least one finished.
  bool JobOver() const;
  // Workers ps:0 has no record of: never started, or not with this spec.
  std::vector<int> NeverHeardFrom() const;
  // "worker:1: <its failure>" for the first worker that failed; "" if none.
  const std::string& failure() const { return failure_; }

 private:
  const double heartbeat_timeout_secs_;
  std::vector<State> states_;  // by worker index
  std::vector<bool> heard_;    // by worker index
  std::string failure_;
};

// "worker:0, worker:2"; "none" when empty.
std::string WorkerList(const std::vector<int>& workers);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_WORKER_ROSTER_H_
