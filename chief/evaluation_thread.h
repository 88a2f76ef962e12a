// The chief's evaluation while training, on a thread of its own: the
// monitor loop hands it a state pulled from the ps tasks and goes on
// polling (checkpoints, dead workers, metrics), and takes the outcome at a
// later poll. The thread runs at the priority the CPU share chose
// (cluster/cpu_share.h's ChooseEvaluationPriority): beside workers that take
// every CPU, at idle priority, on what training leaves, instead of taking
// training's cores. Its compute threads (its own OpenMP pool) inherit it.
//
// Thread-safe; Start and Take are the monitor's, the evaluation the
// thread's.
#ifndef PSTRAIN_CHIEF_EVALUATION_THREAD_H_
#define PSTRAIN_CHIEF_EVALUATION_THREAD_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <optional>
#include <thread>

#include "chief/evaluation.h"
#include "core/mutex.h"
#include "core/status.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

class EvaluationThread {
 public:
  struct Outcome {
    int64_t step = 0;          // the global step of the state evaluated
    double training_secs = 0;  // when it was pulled, in seconds of training
    StatusOr<EvalResult> result = EvalResult();
  };

  // `evaluation`'s model and fleet are the thread's alone. The thread
  // computes on compute_threads threads, at idle priority when `idle` (a
  // refusal is logged and it runs at normal priority).
  EvaluationThread(StateEvaluation evaluation, int compute_threads, bool idle);
  // Cancels an evaluation under way (between two batches) and joins.
  ~EvaluationThread();
  EvaluationThread(const EvaluationThread&) = delete;
  EvaluationThread& operator=(const EvaluationThread&) = delete;

  // Starts evaluating `state`, pulled at `step` after training_secs of
  // training. False, and nothing started, while the last evaluation is
  // under way or its outcome not yet taken.
  bool Start(int64_t step, double training_secs, PsFleet::State state);
  // From Start until its outcome is taken.
  bool busy();
  // The last evaluation's outcome once it is done, taken once.
  std::optional<Outcome> Take();
  // Cancels an evaluation under way and waits for the thread to leave it;
  // its outcome is dropped. The thread can start another afterwards.
  void Cancel();
  // Cancels an evaluation under way without waiting: the thread drops its
  // outcome and is free again once it leaves it (busy until then).
  void Abandon();

 private:
  void Run(int compute_threads, bool idle);
  void AbandonLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StateEvaluation evaluation_;
  std::atomic<bool> cancel_{false};
  Mutex mu_;
  std::condition_variable changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;       // from Start until the outcome is taken
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;  // the one under way
  std::optional<PsFleet::State> state_ ABSL_GUARDED_BY(mu_);  // to evaluate
  Outcome pending_ ABSL_GUARDED_BY(mu_);                      // its step and time
  std::optional<Outcome> done_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: it starts once the rest is built
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_EVALUATION_THREAD_H_
