// HeartbeatSender: tells the ps holding global_step, once per interval, that
// this worker is alive and how many steps it has taken, from a thread of its
// own (so a worker blocked waiting for a sync step still heartbeats). Its
// replies carry the slowest live worker's step, for bounded staleness, and
// the chief's word when it has ended training.
//
// Thread-safe.
#ifndef PSTRAIN_WORKER_HEARTBEAT_SENDER_H_
#define PSTRAIN_WORKER_HEARTBEAT_SENDER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "ps/client/ps_connection.h"

namespace pstrain {

class HeartbeatSender {
 public:
  // Borrows coordinator, which must outlive this object. Starts the thread,
  // which waits `interval` of `clock`'s time between heartbeats.
  HeartbeatSender(PsConnection* coordinator, int worker, std::chrono::milliseconds interval,
                  Clock* clock = Clock::Real());
  ~HeartbeatSender();  // Stop()s

  // Stops the thread and waits for it, and so for any heartbeat in flight.
  // Call it before telling the ps this worker is done: a heartbeat that
  // arrived after WorkerDone would count the worker as running again.
  // Idempotent.
  void Stop();

  void set_local_step(int64_t step) { local_step_.store(step); }
  void set_loss(float loss) { loss_.store(loss); }
  // Sends a heartbeat now; returns the slowest live worker's local step (-1
  // when none is known).
  StatusOr<int64_t> Refresh();
  // Why the chief ended training, as the latest replies said; empty while
  // training goes on.
  std::string training_ended() const;

 private:
  void Run();

  PsConnection* const coordinator_;
  const int worker_;
  const std::chrono::milliseconds interval_;
  Clock* const clock_;
  std::atomic<int64_t> local_step_{0};
  std::atomic<float> loss_{-1};
  mutable Mutex mu_;
  std::condition_variable cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::string ended_reason_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_HEARTBEAT_SENDER_H_
