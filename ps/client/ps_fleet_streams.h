// One training step's transfers, streamed so that a worker computes while
// they run (the data-plane issue's item 3; nn/step_hooks.h is the model's
// side of it).
//
//  - StreamedPull pulls the variables in model order, one request per
//    variable per ps, on a thread per ps: the first layer can run as soon as
//    its own variables are in, while the big ones further on still travel.
//    In sync mode every request waits for the ps to reach the step, so the
//    step's first variables are waited for alone, not the whole pull.
//  - StreamedPush opens each ps's push at once and hands every gradient to
//    a writer thread per ps as the backward pass produces it; each ps
//    applies the push only when its stream ends whole (PushStream), so a
//    step that fails half-way (a NaN, a lost ps) changes nothing on the ps
//    tasks it did not finish.
//
// Both borrow their PsFleet, which must outlive them. The methods of one
// object are called from one thread; they run their own threads, joined
// before Finish returns or the object is destroyed.
#ifndef PSTRAIN_PS_CLIENT_PS_FLEET_STREAMS_H_
#define PSTRAIN_PS_CLIENT_PS_FLEET_STREAMS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

class StreamedPull {
 public:
  // Starts pulling into *values (model order), which gets each variable's
  // shape at once; values[v] must not be touched until Wait(v) says it is
  // whole. Used by PsFleet::StartPull.
  StreamedPull(PsFleet* fleet, std::vector<Tensor>* values, int64_t min_step,
               std::chrono::milliseconds wait);
  ~StreamedPull();  // waits for the requests in flight
  StreamedPull(const StreamedPull&) = delete;
  StreamedPull& operator=(const StreamedPull&) = delete;

  // Blocks until every ps answered its first request; *steps gets each
  // ps's step then (ps 0's is global_step). The first error otherwise
  // (sync: DEADLINE_EXCEEDED when a ps did not reach min_step in `wait`).
  Status WaitSteps(PsFleet::PsSteps* steps);
  // Blocks until values[v] is whole, or the pull failed first.
  Status Wait(size_t v);
  // Waits for every request; the first error.
  Status Finish();

 private:
  void PullFromPs(int ps);
  // Records the end of one ps's requests; error when they failed.
  void Fail(const Status& error);

  PsFleet* const fleet_;
  std::vector<Tensor>* const values_;
  const int64_t min_step_;
  const std::chrono::milliseconds wait_;
  // Per ps, the buffers its replies are assembled into (PsFleet's, reused
  // step after step).
  std::vector<std::map<std::string, Tensor>> buffers_;
  std::vector<std::thread> threads_;

  Mutex mu_;
  std::condition_variable changed_;
  std::vector<int> shards_missing_ ABSL_GUARDED_BY(mu_);  // per variable
  PsFleet::PsSteps steps_ ABSL_GUARDED_BY(mu_);
  int steps_known_ ABSL_GUARDED_BY(mu_) = 0;  // ps tasks that answered once
  Status error_ ABSL_GUARDED_BY(mu_);         // the first failure
};

class StreamedPush {
 public:
  // Opens a push to every ps (PsFleet::StartPush says what it carries),
  // numbered `sequence`.
  StreamedPush(PsFleet* fleet, int worker, int64_t local_step, const PsFleet::PsSteps& pulled,
               bool sync, uint64_t sequence);
  // Without Finish: every ps's push is cut off, and none applies it.
  ~StreamedPush();
  StreamedPush(const StreamedPush&) = delete;
  StreamedPush& operator=(const StreamedPush&) = delete;

  // Queues variable v's gradient (or delta) for the ps tasks that hold its
  // shards; it must stay unchanged until Finish returns. Does not block on
  // the wire. The push's error so far, if any: a gradient of another shape
  // than its variable's, or a variable sent twice, is InvalidArgument and
  // cuts every ps's push off, so that none applies any of it.
  Status Send(size_t v, const Tensor& grad);
  // After every variable was sent once: ends every ps's push and waits for
  // their answers. A variable never sent is InvalidArgument, and no ps
  // applies the push.
  StatusOr<PsFleet::PushResult> Finish();
  // The push's number: a failed one is sent again under it
  // (PsFleet::PushGradientsAndRows).
  uint64_t sequence() const { return result_.sequence; }

 private:
  struct Item {
    const cluster::Shard* shard;
    const Tensor* whole;
  };
  void PushToPs(int ps, proto::PushHeader header);

  PsFleet* const fleet_;
  std::vector<std::thread> threads_;
  PsFleet::PushResult result_;  // each ps's part written by its own thread

  Mutex mu_;
  std::condition_variable changed_;
  std::vector<std::deque<Item>> queues_ ABSL_GUARDED_BY(mu_);  // per ps
  bool ending_ ABSL_GUARDED_BY(mu_) = false;                   // Finish called
  bool aborting_ ABSL_GUARDED_BY(mu_) = false;                 // destroyed unfinished, or malformed
  std::vector<bool> sent_ ABSL_GUARDED_BY(mu_);                // per variable
  Status error_ ABSL_GUARDED_BY(mu_);                          // the first failure
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_CLIENT_PS_FLEET_STREAMS_H_
