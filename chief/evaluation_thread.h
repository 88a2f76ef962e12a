// The chief's evaluation while training, on a thread of its own: the
// monitor loop hands it a state pulled from the ps tasks and goes on
// polling (checkpoints, dead workers, metrics), and takes the outcome at a
// later poll. States wait their turn in a queue of a bounded length, so
// that an evaluation slower than the evaluation interval (on what training
// leaves of a busy host) delays the reports, not the states: every state is
// taken at its time and evaluated in order. The thread runs at the priority the CPU share chose
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
#include <deque>
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

  // How many states may wait for a thread that evaluates `model`: up to
  // 512 MiB of them, a state taken as 3 copies of the model's variables
  // (values, an optimizer slot, a moving average), at most 16. A model of
  // ids' states wait for none: its rows are read from the ps tasks as it is
  // evaluated, so a state that waited would meet rows of a later step.
  static int MaxWaitingFor(const nn::Model& model);

  // `evaluation`'s model and fleet are the thread's alone. The thread
  // computes on compute_threads threads, at idle priority when `idle` (a
  // refusal is logged and it runs at normal priority). Up to max_waiting
  // states wait behind the one under way.
  EvaluationThread(StateEvaluation evaluation, int compute_threads, bool idle, int max_waiting = 0);
  // Cancels an evaluation under way (between two batches) and joins.
  ~EvaluationThread();
  EvaluationThread(const EvaluationThread&) = delete;
  EvaluationThread& operator=(const EvaluationThread&) = delete;

  // Queues `state`, pulled at `step` after training_secs of training, for
  // evaluation. False, and nothing queued, when full().
  bool Start(int64_t step, double training_secs, PsFleet::State state);
  // Whether Start would refuse: 1 + max_waiting states are under way,
  // waiting, or evaluated with their outcomes not yet taken.
  bool full();
  // From a Start until every outcome is taken.
  bool busy();
  // The oldest finished outcome not yet taken (outcomes come in the order
  // of their Starts), each taken once.
  std::optional<Outcome> Take();
  // Take, waiting for the next outcome while the thread is busy; nullopt
  // once it is not.
  std::optional<Outcome> WaitAndTake();
  // Drops the waiting states and the outcomes not taken, cancels the
  // evaluation under way and waits for the thread to leave it (its outcome
  // dropped too). The thread can start another afterwards.
  void Cancel();
  // As Cancel, without waiting: the thread is free again once it leaves the
  // evaluation under way (busy until then).
  void Abandon();

 private:
  void Run(int compute_threads, bool idle);
  void AbandonLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  struct Waiting {
    Outcome outcome;  // its step and time
    PsFleet::State state;
  };
  bool BusyLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool FullLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<Outcome> TakeLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const StateEvaluation evaluation_;
  const size_t max_waiting_;
  std::atomic<bool> cancel_{false};
  Mutex mu_;
  std::condition_variable changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool running_ ABSL_GUARDED_BY(mu_) = false;    // an evaluation under way
  bool abandoned_ ABSL_GUARDED_BY(mu_) = false;  // the one under way
  std::deque<Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  std::deque<Outcome> done_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: it starts once the rest is built
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_EVALUATION_THREAD_H_
