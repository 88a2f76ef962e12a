// Supervisor: the chief's work, from start to end of a training job, with
// TensorFlow's Supervisor / MonitoredTrainingSession behaviour.
//
//   Start     wait for every ps. If they already hold the model (a restarted
//             chief), carry on; else restore every ps from the newest
//             readable checkpoint in the train dir, or initialize from the
//             seed; mark the model ready.
//   Monitor   until no worker can still push and one has finished
//             (chief/worker_roster.h), poll after poll, in parts with one
//             job each:
//               recovery     notice a ps that came back empty (new
//                            incarnation) and restore every ps from the
//                            latest checkpoint;
//               the roster   declare workers dead when their heartbeats
//                            stop; in sync mode tell every ps which workers
//                            can still push (a step needs no more gradients
//                            than they can give), say what a stalled step
//                            waits for (chief/step_watch.h), publish metrics;
//               schedules    save checkpoints on a timer and every N steps,
//                            write summaries, and every eval_secs hand the
//                            variables to the evaluation thread
//                            (chief/evaluation_thread.h), report what it
//                            found at a later poll: the first evaluation
//                            that reaches target_accuracy ends training
//                            (the workers stop after their step and
//                            report done);
//               progress     a line every progress_interval.
//             All its time comes from options.clock.
//             A worker's failure, or one never heard from, ends the job
//             (EndOnFailure) rather than leaving it waiting.
//   Finish    final checkpoint, evaluation on the test set (the final line),
//             shut every ps down.
//   SaveOnStop  a graceful stop (SIGTERM): save a checkpoint (once the
//             model is ready) and leave the ps tasks running for the
//             restarted chief.
//
// Thread-compatible: main calls these in order, from one thread.
#ifndef PSTRAIN_CHIEF_SUPERVISOR_H_
#define PSTRAIN_CHIEF_SUPERVISOR_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chief/checkpoint_manager.h"
#include "chief/evaluation.h"
#include "chief/evaluation_thread.h"
#include "chief/http/metrics.h"
#include "chief/periodic.h"
#include "chief/step_watch.h"
#include "chief/training_summaries.h"
#include "chief/worker_roster.h"
#include "core/clock.h"
#include "core/file_ops.h"
#include "core/status.h"
#include "core/stop_signals.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"
#include "proto/ps.pb.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

struct SupervisorOptions {
  std::string train_dir;
  // Every file the chief writes there (checkpoints, the state file) goes
  // through it: a test's seam for a full disk or a failing fsync.
  FileOps* files = FileOps::Real();
  uint64_t seed = 0;
  // A train dir without a checkpoint: these variables start from these
  // values (chief/warm_start.h), read from warm_start_from; may be null.
  const std::map<std::string, Tensor>* warm_start = nullptr;
  std::string warm_start_from;
  int num_workers = 0;
  int batch_size = 128;    // for examples/sec
  proto::InitHeader init;  // optimizer, sync config, heartbeat timeout, EMA
  std::chrono::seconds startup_timeout{600};
  // How long Monitor goes on without an answer from ps:0, which holds
  // global_step, before it gives up (Unavailable).
  std::chrono::seconds ps_lost_timeout{120};
  std::chrono::seconds progress_interval{15};
  std::chrono::milliseconds poll_interval{500};
  std::chrono::duration<double> step_timeout{30};
  double save_checkpoint_secs = 600;  // 0: no timer
  int64_t save_checkpoint_steps = 0;  // 0: not by steps
  int max_to_keep = 5;
  // kTensorFlow: TF's bundle, slots under TF's names (chief/tf_names.h).
  CheckpointFormat checkpoint_format = CheckpointFormat::kTensorFlow;
  double keep_checkpoint_every_n_hours = 10000;
  // Embedding tables: after each full checkpoint, this many checkpoints
  // save only the rows changed since it (0: every checkpoint is full).
  int delta_checkpoints = 0;
  int64_t save_summaries_steps = 100;  // 0: no summaries
  bool eval_use_moving_averages = false;
  double eval_secs = 0;  // evaluate while training this often (0: at the end only)
  // Where the evaluation while training runs (a thread of its own, with a
  // model and fleet of its own); needed when eval_secs > 0. The final
  // evaluation runs on the caller's thread, with the Supervisor's model.
  EvaluationThread* evaluation_thread = nullptr;
  double target_accuracy = 0;  // end training once an evaluation reaches it (0: off)
  // What target_accuracy is the target of: "accuracy", or another metric of
  // chief/eval_metrics.h for a model of rows (log_loss: at or below).
  std::string target_metric = "accuracy";
  std::string model_name;
  bool loss_is_sum = false;  // the model's loss sums its batch (nn/model_spec.h)
  ImageInput input;          // how the test and training images become the model's input
  // A model of columns' test set, transformed (then no test images).
  const data::FeaturizedRows* test_rows = nullptr;
  MetricsBoard* board = nullptr;  // where /metrics, /status and / read from; may be null
  Clock* clock = Clock::Real();   // what Monitor measures and waits on
};

class Supervisor {
 public:
  // Workers given a line each on the status page and in pstrain_task_up:
  // every one of a job this size or smaller; of a larger job, those not
  // running first, this many in all (the rest counted by state).
  static constexpr int kListedWorkers = 64;

  // Borrows everything; all must outlive the Supervisor. train_set may be
  // null (then no histograms of gradients and no image summary).
  Supervisor(nn::Model* model, PsFleet* fleet, const data::ImageDataset* test_set,
             const data::ImageDataset* train_set, StopNotice* stop, SupervisorOptions options);

  Status Start();
  // Returns when every worker has reported done; Aborted on a stop request;
  // FailedPrecondition when the job cannot go on: a worker failed (a bad
  // flag, another model), or one never reported to ps:0 within
  // startup_timeout of the model being ready; the error names it.
  Status Monitor();
  // After Monitor's FailedPrecondition: tells the workers to stop, saves a
  // checkpoint, and shuts every ps down with `why`, so the whole job ends.
  void EndOnFailure(const Status& why);
  Status Finish();
  Status SaveOnStop();

  int64_t restores() const { return restores_; }

 private:
  // Says what the job trains with: the placement, the optimizer, sync or
  // async.
  void LogModelReady() const;
  // The workers' health from ps:0's status into *metrics: every worker of
  // a small job; of a large one, those not running first (then the running
  // ones), at most kListedWorkers, the rest counted.
  void ListWorkers(const proto::StatusResponse& st, ChiefMetrics* metrics) const;
  // Restores every ps from the newest readable checkpoint, else initializes
  // from the seed. `why` goes into the log line.
  Status RestoreOrInitialize(const std::string& why);
  // Records each ps's incarnation; an empty ps means it must be restored.
  Status CheckPsIncarnations(bool* needs_restore);
  // Monitor's parts, in the order of a poll.
  // Recovery: restores every ps when one came back empty.
  Status RecoverLostPs();
  // Whether ps 0's status speaks for no model: it came back empty since
  // CheckPsIncarnations found it unreachable (global_step 0, no workers).
  bool FromAnEmptyPs(const proto::StatusResponse& coordinator) const;
  // The roster and what follows from it: live workers (sync), the step
  // watch, metrics. True once no worker can still push.
  bool ObserveWorkers(const proto::StatusResponse& coordinator);
  // FailedPrecondition when a worker failed, or has never been heard from
  // since startup_timeout after the model was ready.
  Status CheckWorkersCanGoOn() const;
  // Checkpoints, summaries, evaluation and the word to end training, each
  // when it is due.
  void RunSchedules(const proto::StatusResponse& coordinator);
  // The progress line, when it is due.
  void ReportProgress(const proto::StatusResponse& coordinator);
  Status SaveCheckpoint(const char* why);
  // The evaluation's scalars for TensorBoard: precision_at_1 (the
  // accuracy), and a model of columns' other metrics.
  Status SummarizeEval(int64_t step, const EvalResult& eval);
  // The evaluation while training, each poll: reports the one done since
  // the last poll and starts the next when due and the thread is free.
  Status EvaluateWhileTraining();
  // How long an evaluation on the thread may go on before it counts as
  // starved of CPU: 3 eval_secs, at least 30 s.
  Clock::Duration StarvedAfter() const;
  // The evaluation line, its summaries; sets end_reason_ when it reached
  // the target.
  Status ReportEvaluation(const EvaluationThread::Outcome& done);
  Status WriteSummaries(const proto::StatusResponse& coordinator);
  // Sync: tells every ps which workers can still push, when that changed
  // since it was last told.
  Status SendLiveWorkers();
  // Says what a sync step that stood still too long waits for.
  void LogStalledStep(const proto::StatusResponse& coordinator);
  // Fills the metrics board from ps 0's status and the ps tasks' health.
  // ps_tables_ as the metrics and the summaries give them: a shard each.
  std::vector<TableShardMetrics> TableShards() const;
  void PublishMetrics(const proto::StatusResponse& coordinator);

  nn::Model* const model_;
  PsFleet* const fleet_;
  const data::ImageDataset* const test_set_;
  const data::ImageDataset* const train_set_;
  StopNotice* const stop_;
  const SupervisorOptions options_;
  CheckpointManager checkpoints_;
  std::unique_ptr<TrainingSummaries> summaries_;

  std::vector<uint64_t> incarnations_;  // per ps, 0: unknown
  std::vector<TaskHealth> ps_health_;   // per ps, from the last check
  std::vector<LossPoint> loss_history_;
  Clock* const clock_;
  const Clock::TimePoint started_;
  int64_t restores_ = 0;
  int64_t last_saved_step_ = -1;
  bool save_failing_ = false;  // the last scheduled save failed (logged once)
  // The newest full checkpoint of the tables this process saved, and the
  // deltas saved since (-1: none yet; a restart saves a full one first).
  int64_t last_full_step_ = -1;
  // Each ps's embedding tables, as its latest status told.
  std::vector<std::vector<proto::TableState>> ps_tables_;
  int deltas_since_full_ = 0;
  int64_t last_summary_step_ = 0;
  int64_t summary_window_step_ = 0;
  Clock::TimePoint summary_window_start_;
  WorkerRoster roster_;
  // The live workers every ps was last told of; unset: not told since a
  // restore (or ever).
  std::optional<std::vector<int>> sent_live_;
  StepWatch steps_;
  Periodic checkpoint_timer_;  // save_checkpoint_secs; done at every save
  Periodic eval_timer_;        // eval_secs; done as each evaluation starts
  // When the evaluation thread last showed progress: an outcome taken, or
  // a state handed to it while idle.
  Clock::TimePoint eval_progress_;
  Periodic progress_timer_;  // progress_interval
  // The final evaluation's, and a starved one's: the Supervisor's model and
  // fleet.
  const StateEvaluation final_evaluation_;
  Clock::TimePoint training_started_;  // when Start made the model ready
  std::string end_reason_;             // non-empty once this chief has ended training
  bool model_ready_ = false;           // Start made (or found) the model ready
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUPERVISOR_H_
