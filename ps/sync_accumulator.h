// SyncAccumulator: the gradients of one synchronous step on one ps, and the
// rule that decides when the step is complete (TensorFlow's
// SyncReplicasOptimizer, with a strict mode TF lacked).
//
// Semantics, for the step S the accumulator is at:
//  - a gradient computed at a step older than S is stale: dropped and counted;
//  - a gradient computed at a step newer than S is refused with Aborted:
//    the ps was restored to an older step while the worker computed; the
//    worker retries the step;
//  - the first R = replicas_to_aggregate gradients computed at S are kept;
//    with R of them the step is complete: their average is handed out (summed
//    in worker order, so a run with fixed seeds repeats to the bit) and the
//    accumulator moves to S + 1;
//  - strict: a worker counts once per step; its second gradient for S is a
//    duplicate, dropped and counted. Not strict (TF's behaviour): a worker
//    that pushes twice counts twice;
//  - fewer workers than R can still push (the others finished or were
//    declared dead, as the chief tells with SetLiveReplicas): a step needs
//    the gradients of all L that remain, min(R, L), at least 1. Lowering L
//    may complete the step at once (it holds enough already); with L = 0 a
//    step completes with whatever it holds, so no computed gradient is lost.
//    TensorFlow waits for ever here: its end-of-training hang;
//  - embedding rows (sparse gradients: keys and a row per key, per table)
//    are averaged as TF's SparseConditionalAccumulator averages them: each
//    key's rows summed over the step's gradients in worker order, then
//    divided by the number of gradients that carry that key, not by the
//    number of gradients. The average's keys come in the order first seen
//    in worker order; a gradient may carry any tables and keys.
//
// Not thread-safe: the owner (VariableStore) serializes calls.
#ifndef PSTRAIN_PS_SYNC_ACCUMULATOR_H_
#define PSTRAIN_PS_SYNC_ACCUMULATOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ps/embedding/sparse_rows.h"

namespace pstrain {

class SyncAccumulator {
 public:
  struct Options {
    int replicas_to_aggregate = 1;
    bool strict = false;
  };
  enum class Outcome { kAccepted, kStepComplete, kStale, kDuplicate };

  SyncAccumulator(const Options& options, int64_t step);

  // Offers one worker's gradients computed at `computed_at`: whole
  // variables, and embedding rows by table (unique keys). On
  // kStepComplete, call TakeAverage before the next Offer. Aborted for a
  // gradient from the future; InvalidArgument for one whose variables or
  // shapes differ from the first gradient of the step.
  StatusOr<Outcome> Offer(int worker, int64_t computed_at, std::map<std::string, Tensor> grads,
                          std::map<std::string, SparseRows> sparse = {});

  struct Average {
    std::map<std::string, Tensor> dense;
    std::map<std::string, SparseRows> sparse;
  };
  // The average of the step's gradients; moves to the next step.
  Average TakeAverage();

  // How many workers can still push (a negative count: all of them, the
  // start state). Returns true when the step is now complete: call
  // TakeAverage.
  bool SetLiveReplicas(int live);
  // Gradients the current step needs: min(R, live), at least 1.
  int required() const;
  int live_replicas() const { return live_replicas_; }

  int64_t step() const { return step_; }
  int pending() const { return static_cast<int>(received_.size()); }
  const Options& options() const { return options_; }
  int64_t stale_dropped() const { return stale_dropped_; }
  int64_t duplicates_dropped() const { return duplicates_dropped_; }
  // Resets to `step` with nothing pending (after a restore); the live count
  // is kept.
  void Reset(int64_t step);

 private:
  const Options options_;
  int64_t step_;
  int live_replicas_ = -1;  // < 0: every worker
  struct Received {
    int worker;
    std::map<std::string, Tensor> dense;
    std::map<std::string, SparseRows> sparse;
  };
  // The sparse half of TakeAverage.
  std::map<std::string, SparseRows> AverageRows() const;

  std::vector<Received> received_;
  int64_t stale_dropped_ = 0;
  int64_t duplicates_dropped_ = 0;
};

const char* OutcomeName(SyncAccumulator::Outcome outcome);

}  // namespace pstrain

#endif  // PSTRAIN_PS_SYNC_ACCUMULATOR_H_
