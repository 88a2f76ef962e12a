// SyncReplicas: one ps task's synchronous replicas. Its SyncAccumulator
// (which gradients a step takes, and when it is complete:
// ps/sync_accumulator.h) behind a lock of its own, and the application of
// each completed step's average, which the caller gives as ApplyStep.
//
// Thread contract: any call from any thread. The lock is held while a
// completed step is applied, so the next step's gradients wait for it and
// the step never moves back; ApplyStep must not call into this object.
#ifndef PSTRAIN_PS_SYNC_REPLICAS_H_
#define PSTRAIN_PS_SYNC_REPLICAS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/ps.pb.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/sync_accumulator.h"

namespace pstrain {

class SyncReplicas {
 public:
  // Applies a completed step's average, computed at step `computed_at`;
  // the step is then computed_at + 1.
  using ApplyStep = std::function<void(SyncAccumulator::Average average, int64_t computed_at)>;

  // Starts over at `step` with nothing pending: synchronous when
  // config.enabled() (InvalidArgument for replicas_to_aggregate < 1,
  // nothing changed), else asynchronous. What the chief said of the live
  // workers is kept (a restore).
  Status Reset(const proto::SyncConfig& config, int64_t step);
  bool enabled() const;

  struct Result {
    proto::PushOutcome outcome;
    int64_t step;  // this ps's step afterwards
  };
  // Offers one worker's gradients (checked by the caller) to the step;
  // `apply` runs when they complete it. FailedPrecondition when this ps
  // trains asynchronously; SyncAccumulator::Offer's errors.
  StatusOr<Result> Offer(int worker, int64_t computed_at, std::map<std::string, Tensor> grads,
                         std::map<std::string, SparseRows> sparse, const ApplyStep& apply);
  // How many workers can still push; `apply` runs when the pending step
  // already has the gradients it now needs. Returns the step afterwards.
  // FailedPrecondition when this ps trains asynchronously.
  StatusOr<int64_t> SetLiveReplicas(int live, const ApplyStep& apply);

  struct Stats {
    int pending = 0;
    int required = 0;  // gradients the step needs: min(R, live workers)
    int64_t stale_dropped = 0;
    int64_t duplicates_dropped = 0;
  };
  Stats stats() const;
  // " (P of R gradients for step S)", or "" when asynchronous: what a
  // timed-out wait for the step says.
  std::string DescribeStep() const;

 private:
  void CompleteLocked(const ApplyStep& apply) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  std::unique_ptr<SyncAccumulator> accumulator_ ABSL_GUARDED_BY(mu_);  // null: asynchronous
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_SYNC_REPLICAS_H_
