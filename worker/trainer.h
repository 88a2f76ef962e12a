// Trainer: one worker's training loop against the ps tasks.
//
// Each step, for every kind of model, takes the next batch of this worker's
// shard, pulls every variable (and, for a model of ids, in the same
// requests, the rows of the batch's unique ids), runs the model forward and
// backward on the batch (nn::Model::LossAndGradients), and pushes the
// gradients (with the rows', one per unique id). The three are overlapped
// (ps/client/ps_fleet_streams.h, nn/step_hooks.h) unless options.overlap is
// off or the model has ids (its rows are needed whole before it starts): a
// layer runs as soon as its own variables are in, and each gradient is
// processed and sent as soon as backward has it. A step that fails part-way
// pushes nothing, and the next try trains on the same batch.
//  - async: each push is applied at once; with staleness >= 0 the worker
//    waits while it is more than `staleness` steps ahead of the slowest live
//    worker;
//  - sync: after a push computed at step S the worker pulls again only once
//    every ps is past S; a wait longer than step_timeout is logged (naming
//    what is missing) and resumed, so a dead worker that comes back lets
//    training continue.
// Stops when global_step reaches max_steps, when the input runs out
// (epochs), or when `stop` is notified.
//
// Thread-compatible: Run is called once, from one thread.
#ifndef PSTRAIN_WORKER_TRAINER_H_
#define PSTRAIN_WORKER_TRAINER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "core/stop_signals.h"
#include "data/batch_source.h"
#include "nn/model.h"
#include "ps/client/ps_fleet.h"
#include "ps/client/ps_fleet_streams.h"
#include "ps/lr_schedule.h"
#include "worker/backoff.h"
#include "worker/gradient_processing.h"
#include "worker/heartbeat_sender.h"

namespace pstrain {

struct TrainerOptions {
  int worker_index = 0;
  int64_t max_steps = 0;  // 0: no limit (the input's epochs decide)
  int log_frequency = 10;
  bool sync = false;
  std::chrono::milliseconds step_timeout{30000};
  int staleness = -1;  // async only; -1: unbounded
  // The time every wait and every measure of a step is taken on.
  Clock* clock = Clock::Real();
  std::chrono::milliseconds step_delay{0};  // test only: a deliberately slow worker
  // How long to keep retrying a step whose pull or push failed with a
  // retryable error (a ps restarting) before giving up.
  std::chrono::seconds retry_budget{300};
  GradientOptions gradients;  // weight decay, multipliers, clipping
  // true: overlap the step's pull and push with its computation (layer by
  // layer); false: pull, compute and push one after the other, which is
  // faster where the computation's threads take every CPU (the transfers
  // then only slow it down).
  bool overlap = true;
  // The model's loss is its batch's sum, not its mean (nn/model_spec.h):
  // the progress line says which.
  bool loss_is_sum = false;
  // A model of example-by-example updates (nn/fasttext_model.h): the rate
  // of its updates at each global step (ModelInput::learning_rate).
  std::optional<LrSchedule> example_learning_rate;
};

struct TrainerResult {
  int64_t local_steps = 0;
  int64_t global_step = 0;
  int64_t stale_gradients = 0;  // sync: pushes some ps dropped as stale
  float first_loss = 0;
  float last_loss = 0;
  bool stopped = false;  // a stop request ended it, not the end of training
};

class Trainer {
 public:
  // Borrows everything; all must outlive Run. heartbeat may be null.
  Trainer(nn::Model* model, PsFleet* fleet, data::BatchSource* input, HeartbeatSender* heartbeat,
          const StopNotice* stop, const TrainerOptions& options);

  // InvalidArgument naming the step when the loss is NaN or Inf (nothing of
  // that step is pushed); the ps's error when a pull or push fails.
  StatusOr<TrainerResult> Run();

 private:
  // What one step did, for Run's bookkeeping.
  struct StepRecord {
    data::Batch batch;
    bool finished = false;    // no step taken: max_steps reached or input exhausted
    int64_t global_step = 0;  // when finished: global_step then (-1: unknown)
    float loss = 0;
    PsFleet::PushResult pushed;
    double pull_secs = 0, wait_secs = 0, compute_secs = 0, push_secs = 0;
  };
  // The steps since the last progress line (--log_frequency), for --v=1:
  // waiting for every ps's first answer (the whole pull when not
  // overlapped), for variables during the step, computing, and for the
  // push to end.
  struct ProgressWindow {
    Clock::TimePoint start;
    int64_t examples = 0, steps = 0;
    double pull_secs = 0, wait_secs = 0, compute_secs = 0, push_secs = 0;
  };
  // A step done: counted in *result and the heartbeat, and in *window,
  // whose progress line is logged every log_frequency local steps.
  void CountStep(const StepRecord& record, TrainerResult* result, ProgressWindow* window);
  // One step: its batch (the one a failed step left, or the next, with
  // the unique ids of each lookup's feature into tables_, split by ps),
  // then its transfers and computation, overlapped or one after the other.
  // Any error is the step's (retried by Run when retryable);
  // InvalidArgument naming the feature when the batch lacks one. Sets
  // record->finished instead when global_step reached max_steps or the
  // input ran out.
  Status Step(int64_t min_step, int64_t local_step, StepRecord* record);
  Status OverlappedStep(int64_t min_step, int64_t local_step, StepRecord* record);
  Status SerialStep(int64_t min_step, int64_t local_step, StepRecord* record);
  // The batch as the model reads it, at the step's rate for a model of
  // example-by-example updates.
  nn::ModelInput InputOf(const data::Batch& batch) const;
  // Whether the pulled global_step reached max_steps (then record->finished).
  bool ReachedMaxSteps(StepRecord* record) const;
  // InvalidArgument naming the step when the loss is NaN or Inf.
  Status CheckLoss(float loss) const;
  // Pulls every variable at once into params_, and the rows of tables_'
  // ids (sync: once every ps is at min_step), retrying timed-out sync waits
  // with a log line.
  Status Pull(int64_t min_step);
  // Runs pull(wait) until it ends otherwise than a sync wait for min_step
  // timing out, which is logged and retried; Aborted when stopped.
  Status WaitingForStep(int64_t min_step,
                        const std::function<Status(std::chrono::milliseconds wait)>& pull);
  // Starts pulling the variables into params_ (sync: once every ps is at
  // min_step) and waits for every ps's step (steps_), retrying timed-out
  // sync waits with a log line. Aborted when stopped.
  StatusOr<std::unique_ptr<StreamedPull>> StartPull(int64_t min_step);
  // Async with bounded staleness: waits until this worker is within
  // `staleness` steps of the slowest live worker (after a wait, the next
  // step pulls).
  Status WaitWithinStaleness(int64_t local_step);
  // After a failed pull or push: OK (after a back-off wait) when the step is
  // worth retrying, else the error. Resets *min_step.
  Status RetryAfter(const Status& error, int64_t* min_step);
  // The step's push, `pushed` its first try: while it fails so that its
  // answer may have been lost (Action::kRetry), it is sent again whole
  // under its number, after the backoff's wait. A ps that applied it
  // answers as the first time (ps/push_ledger.h): the step's gradients
  // land on every ps exactly once.
  StatusOr<PsFleet::PushResult> PushedOnce(StatusOr<PsFleet::PushResult> pushed, uint64_t sequence,
                                           int64_t local_step);
  // The step's gradients (and rows) in one push numbered `sequence`,
  // writing the variables after it into params_ where pull_with_push_.
  StatusOr<PsFleet::PushResult> PushWhole(int64_t local_step, uint64_t sequence);
  // After a failed step: a ps may still read or write the variables and
  // gradients where they lie (the arena), so they are retired for new ones
  // (and the next step pulls).
  void RenewBuffers();
  // Whether the heartbeats say the chief ended training (logged once).
  bool EndedByChief();

  nn::Model* const model_;
  PsFleet* const fleet_;
  data::BatchSource* const input_;
  HeartbeatSender* const heartbeat_;
  const StopNotice* const stop_;
  const TrainerOptions options_;
  const std::vector<std::string> names_;  // the model's variables, in order
  const std::vector<bool> trainable_;     // their trainable flags, in order

  Backoff backoff_;
  Clock* const clock_;
  const bool overlap_;  // the step's transfers overlapped with its computation
  // Serial async steps of a model without lookups ask each push to write
  // the variables after it into params_ (PsFleet::PushGradientsAndRows'
  // pull_into); values_pulled_: the last push did, so the next step
  // needs no pull.
  const bool pull_with_push_;
  bool values_pulled_ = false;
  bool ended_logged_ = false;
  std::vector<Tensor> params_, grads_;
  // Per lookup of a model of ids, the batch's ids and rows, and the rows'
  // gradients; whether the batch in the record is still to be trained on.
  std::vector<PsFleet::TableStep> tables_;
  std::vector<Tensor> row_grads_;
  bool batch_pending_ = false;
  PsFleet::PsSteps steps_;
};

// "2026-11-21 10:00:00.123: step 120, loss = 2.31 (batch mean; 1432.1 examples/sec; 0.089
// sec/batch)", "batch sum" where loss_is_sum.
std::string ProgressLine(int64_t step, float loss, bool loss_is_sum, double examples_per_sec,
                         double sec_per_batch);

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_TRAINER_H_
