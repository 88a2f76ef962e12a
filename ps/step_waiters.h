// StepWaiters: waits for a sync step that hold no thread. A pull that asks
// for a step the ps has not reached registers a callback here and gives its
// thread back; the step's completion (or the wait's deadline, a restore, a
// cancel) calls it once. So two thousand workers waiting on one ps cost two
// thousand entries, not two thousand threads.
//
// One thread, started with the first wait that has a deadline, calls the
// callbacks of waits whose deadline passes, on the injected Clock. Other
// outcomes are called on the thread that causes them (Advance, Restart,
// Cancel): a callback must be quick and must not call back into the
// StepWaiters (it hands the pull to a transport's loop or pool).
//
// Thread-safe.
#ifndef PSTRAIN_PS_STEP_WAITERS_H_
#define PSTRAIN_PS_STEP_WAITERS_H_

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"

namespace pstrain {

class StepWaiters {
 public:
  // The wait's outcome: OkStatus once the step is reached, DeadlineExceeded
  // when the deadline passes first, Aborted when the steps restart (a
  // restore), Cancelled when Cancel ends it.
  using Ready = std::function<void(const Status&)>;
  // What a wait that timed out still lacks, for its error (" (3 of 8
  // gradients for step 41)"); called with no lock of this class held.
  using Describe = std::function<std::string()>;

  StepWaiters(Clock* clock, Describe describe);
  // Ends every wait still pending with Cancelled, then the timer thread.
  ~StepWaiters();
  StepWaiters(const StepWaiters&) = delete;
  StepWaiters& operator=(const StepWaiters&) = delete;

  // 0 when the step is `min_step` or later already (ready is not called);
  // else the wait's id, and ready is called once with its outcome.
  uint64_t Add(int64_t min_step, Clock::TimePoint deadline, Ready ready);
  // Ends wait `id` with Cancelled unless it has ended. Once Cancel returns,
  // the wait's callback has returned or will never be called.
  void Cancel(uint64_t id);
  // The step is now `step` (never lower than before): the waits it reaches
  // end with OkStatus.
  void Advance(int64_t step);
  // The steps start again at `step` (a restore): every wait ends with
  // Aborted.
  void Restart(int64_t step);

  int64_t step() const;
  // Waits pending now.
  int pending() const;

 private:
  struct Wait {
    int64_t min_step;
    Clock::TimePoint deadline;
    Ready ready;
  };
  // Removes wait `id` (pending) from every index, marked as firing.
  Wait TakeLocked(uint64_t id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Calls each of `ended` (taken, firing) with `outcome`, then unmarks them.
  void Fire(std::vector<std::pair<uint64_t, Ready>> ended, const Status& outcome);
  // The timer thread: ends waits whose deadline has passed.
  void RunTimer();

  Clock* const clock_;
  const Describe describe_;
  mutable Mutex mu_;
  std::condition_variable changed_;  // a new deadline, a callback done, or stopping
  int64_t step_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  std::map<uint64_t, Wait> waits_ ABSL_GUARDED_BY(mu_);
  // Step order, for Advance: (min_step, id).
  std::set<std::pair<int64_t, uint64_t>> by_step_ ABSL_GUARDED_BY(mu_);
  // Deadline order, for the timer: (deadline, id).
  std::set<std::pair<Clock::TimePoint, uint64_t>> deadlines_ ABSL_GUARDED_BY(mu_);
  // Waits whose callback is being called now (Cancel waits for them).
  std::set<uint64_t> firing_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread timer_;  // started by the first Add that waits
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_STEP_WAITERS_H_
