// WorkerRegistry: what the ps holding global_step knows of each worker: its
// last heartbeat, its local step count, and whether it has finished. The
// chief reads it to declare workers dead; workers read the slowest live
// worker's step to bound their staleness.
//
// Thread-safe. Time comes from a Clock (core/clock.h), which tests control.
#ifndef PSTRAIN_PS_WORKER_REGISTRY_H_
#define PSTRAIN_PS_WORKER_REGISTRY_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"

namespace pstrain {

class WorkerRegistry {
 public:
  explicit WorkerRegistry(Clock* clock = Clock::Real()) : clock_(clock) {}

  struct WorkerState {
    int worker = 0;
    double seconds_since_heartbeat = 0;
    int64_t local_step = 0;
    bool done = false;
    float loss = 0;
    std::string failure;  // done, but failed (WorkerDoneRequest::failure)
  };

  // loss < 0: not known (the previous one is kept).
  void Heartbeat(int worker, int64_t local_step, float loss = -1);
  // `failure` non-empty: the worker ended on an error (kept until it
  // heartbeats again, as a restarted worker does).
  void MarkDone(int worker, const std::string& failure);
  std::vector<WorkerState> Snapshot() const;
  // The smallest local step among workers that are neither done nor silent
  // for longer than `timeout`; -1 when there are none.
  int64_t MinLiveLocalStep(std::chrono::duration<double> timeout) const;

 private:
  struct Entry {
    Clock::TimePoint last_seen;
    int64_t local_step = 0;
    bool done = false;
    float loss = 0;
    std::string failure;
  };
  Clock* const clock_;
  mutable Mutex mu_;
  std::map<int, Entry> workers_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_WORKER_REGISTRY_H_
