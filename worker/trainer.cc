#include "worker/trainer.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>

#include "core/status_action.h"
#include "ps/client/ps_fleet_streams.h"
#include "ps/client/table_steps.h"

namespace pstrain {

std::string ProgressLine(int64_t step, float loss, bool loss_is_sum, double examples_per_sec,
                         double sec_per_batch) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm;
  localtime_r(&t, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
  char line[160];
  std::snprintf(line, sizeof(line),
                "%s.%03d: step %lld, loss = %.2f (batch %s; %.1f examples/sec; %.3f sec/batch)",
                when, ms, static_cast<long long>(step), loss, loss_is_sum ? "sum" : "mean",
                examples_per_sec, sec_per_batch);
  return line;
}

namespace {

// One step's meeting of model and transfers: each layer waits for its own
// variables, and each gradient is processed and sent the moment backward
// has it (unless clipping by global norm needs them all first).
class StepStreams : public nn::StepHooks {
 public:
  StepStreams(StreamedPull* pull, std::function<std::unique_ptr<StreamedPush>()> start_push,
              const GradientOptions& options, const std::vector<std::string>& names,
              const std::vector<bool>& trainable, const std::vector<Tensor>& params, int64_t step,
              std::vector<Tensor>* grads, Clock* clock)
      : pull_(pull),
        start_push_(std::move(start_push)),
        options_(options),
        names_(names),
        trainable_(trainable),
        params_(params),
        step_(step),
        grads_(grads),
        clock_(clock) {}

  Status ParamReady(size_t v) override {
    const auto t0 = clock_->Now();
    Status s = Transfer(pull_->Wait(v));
    waited_secs_ += std::chrono::duration<double>(clock_->Now() - t0).count();
    return s;
  }

  Status GradientReady(size_t v) override {
    PS_RETURN_IF_ERROR(ProcessGradient(options_, names_[v], trainable_[v], params_[v], step_,
                                       &(*grads_)[v], &added_loss_));
    if (options_.clip_global_norm > 0) return OkStatus();  // sent by SendRest
    return Transfer(push()->Send(v, (*grads_)[v]));
  }

  // After backward: clips by global norm and sends every gradient, where
  // that waited for all of them.
  Status SendRest() {
    if (options_.clip_global_norm <= 0) return OkStatus();
    ClipByGlobalNorm(options_, trainable_, grads_);
    for (size_t v = grads_->size(); v-- > 0;) {
      PS_RETURN_IF_ERROR(Transfer(push()->Send(v, (*grads_)[v])));
    }
    return OkStatus();
  }

  // The first failure of a pull or push under the model (a lost ps, to be
  // retried), as opposed to the model's own errors.
  const Status& transfer_error() const { return transfer_error_; }

  // The push, opened by the first gradient; null before.
  StreamedPush* push() {
    if (push_ == nullptr) push_ = start_push_();
    return push_.get();
  }
  // Seconds the model spent waiting for variables still on the wire.
  double waited_secs() const { return waited_secs_; }
  // The loss terms of the worker's weight decay.
  float added_loss() const { return added_loss_; }

 private:
  StreamedPull* const pull_;
  const std::function<std::unique_ptr<StreamedPush>()> start_push_;
  const GradientOptions& options_;
  const std::vector<std::string>& names_;
  const std::vector<bool>& trainable_;
  const std::vector<Tensor>& params_;
  const int64_t step_;
  std::vector<Tensor>* const grads_;
  Clock* const clock_;
  std::unique_ptr<StreamedPush> push_;
  float added_loss_ = 0;
  double waited_secs_ = 0;
  Status transfer_error_;

  Status Transfer(Status s) {
    if (!s.ok() && transfer_error_.ok()) transfer_error_ = s;
    return s;
  }
};

}  // namespace

Trainer::Trainer(nn::Model* model, PsFleet* fleet, data::BatchSource* input,
                 HeartbeatSender* heartbeat, const StopNotice* stop, const TrainerOptions& options)
    : model_(model),
      fleet_(fleet),
      input_(input),
      heartbeat_(heartbeat),
      stop_(stop),
      options_(options),
      names_([model] {
        std::vector<std::string> names;
        for (const auto& v : model->variables()) names.push_back(v.name);
        return names;
      }()),
      trainable_([model] {
        std::vector<bool> trainable;
        for (const auto& v : model->variables()) trainable.push_back(v.trainable);
        return trainable;
      }()),
      backoff_(std::chrono::milliseconds(100), std::chrono::seconds(5), options.retry_budget,
               options.clock),
      clock_(options.clock),
      // A model of ids needs its rows whole before the step: they come with
      // the variables in one pull, and the step's transfers are not
      // overlapped with its computation.
      overlap_(options.overlap && model->lookups().empty()),
      pull_with_push_(!overlap_ && !options.sync && model->lookups().empty()) {
  RenewBuffers();
}

void Trainer::RenewBuffers() {
  values_pulled_ = false;
  // Where the ps tasks on this host write the variables and read the
  // gradients, without a copy on this side.
  if (fleet_ == nullptr) return;
  fleet_->Retire(std::move(params_));
  fleet_->Retire(std::move(grads_));
  params_ = fleet_->VariableBuffers();
  grads_ = fleet_->VariableBuffers();
}

StatusOr<std::unique_ptr<StreamedPull>> Trainer::StartPull(int64_t min_step) {
  std::unique_ptr<StreamedPull> pull;
  PS_RETURN_IF_ERROR(WaitingForStep(min_step, [&](std::chrono::milliseconds wait) {
    pull = fleet_->StartPull(&params_, options_.sync ? min_step : 0, wait);
    return pull->WaitSteps(&steps_);
  }));
  return pull;
}

Status Trainer::WaitingForStep(int64_t min_step,
                               const std::function<Status(std::chrono::milliseconds)>& pull) {
  const auto wait = options_.sync ? options_.step_timeout : std::chrono::milliseconds(0);
  const auto start = clock_->Now();
  for (;;) {
    Status s = pull(wait);
    if (s.code() != Code::kDeadlineExceeded || !options_.sync) return s;
    if (EndedByChief()) return s;
    LOG(WARNING) << "worker:" << options_.worker_index << " has waited "
                 << std::chrono::duration_cast<std::chrono::seconds>(clock_->Now() - start).count()
                 << " s for step " << min_step << ": " << s.message();
    if (stop_ != nullptr && stop_->requested()) return Aborted("stopped: " + stop_->reason());
  }
}

bool Trainer::EndedByChief() {
  if (heartbeat_ == nullptr) return false;
  const std::string why = heartbeat_->training_ended();
  if (why.empty()) return false;
  if (!ended_logged_) {
    LOG(INFO) << "worker:" << options_.worker_index << " stopping: the chief ended training ("
              << why << ")";
    ended_logged_ = true;
  }
  return true;
}

Status Trainer::WaitWithinStaleness(int64_t local_step) {
  auto last_log = clock_->Now();
  // Soon at first (the slowest worker may be a step away), then half as
  // often each time, at most every second: a thousand waiting workers ask
  // ps:0 about a thousand times a second, not fifty thousand.
  Backoff poll(std::chrono::milliseconds(20), std::chrono::seconds(1), std::chrono::hours(24 * 365),
               clock_);
  for (;;) {
    PS_ASSIGN_OR_RETURN(int64_t slowest, heartbeat_->Refresh());
    if (slowest < 0 || local_step - slowest <= options_.staleness || EndedByChief()) {
      return OkStatus();
    }
    // The others push meanwhile: the values the last push wrote grow
    // stale, and the next step pulls.
    values_pulled_ = false;
    if (clock_->Now() - last_log > std::chrono::seconds(5)) {
      LOG(INFO) << "worker:" << options_.worker_index << " is at local step " << local_step << ", "
                << local_step - slowest << " ahead of the slowest live worker; waiting";
      last_log = clock_->Now();
    }
    if (!poll.Wait(stop_)) {
      return Aborted(stop_ != nullptr ? "stopped: " + stop_->reason() : "waited a year");
    }
  }
}

Status Trainer::RetryAfter(const Status& error, int64_t* min_step) {
  if (!IsRetryable(error)) return error;
  LOG(WARNING) << "worker:" << options_.worker_index << ": " << error.ToString() << "; retrying in "
               << backoff_.next_wait().count() << " ms";
  if (!backoff_.Wait(stop_)) {
    if (stop_ != nullptr && stop_->requested()) return Aborted("stopped: " + stop_->reason());
    return error.Annotate("gave up retrying");
  }
  // A ps may have been restored to an older step: do not wait for the next.
  *min_step = 0;
  return OkStatus();
}

StatusOr<PsFleet::PushResult> Trainer::PushedOnce(StatusOr<PsFleet::PushResult> pushed,
                                                  uint64_t sequence, int64_t local_step) {
  while (!pushed.ok() && ActionFor(pushed.status()) == Action::kRetry) {
    LOG(WARNING) << "worker:" << options_.worker_index << ": push " << sequence << ": "
                 << pushed.status().ToString() << "; retrying in " << backoff_.next_wait().count()
                 << " ms (the same push: a ps that applied it answers as before)";
    if (!backoff_.Wait(stop_)) {
      if (stop_ != nullptr && stop_->requested()) return Aborted("stopped: " + stop_->reason());
      return pushed.status().Annotate("gave up sending push " + std::to_string(sequence));
    }
    pushed = PushWhole(local_step, sequence);
  }
  return pushed;
}

StatusOr<PsFleet::PushResult> Trainer::PushWhole(int64_t local_step, uint64_t sequence) {
  return fleet_->PushGradientsAndRows(grads_, tables_, row_grads_, options_.worker_index,
                                      local_step, steps_, options_.sync, sequence,
                                      pull_with_push_ ? &params_ : nullptr);
}

Status Trainer::Pull(int64_t min_step) {
  return WaitingForStep(min_step, [&](std::chrono::milliseconds wait) {
    return fleet_->PullVariablesAndRows(&params_, &tables_, &steps_, options_.sync ? min_step : 0,
                                        wait);
  });
}

Status Trainer::Step(int64_t min_step, int64_t local_step, StepRecord* record) {
  // The batch first: a model of ids pulls the rows its ids name. It is
  // kept until a push lands, so a failed step trains on it again.
  if (!batch_pending_) {
    if (!input_->Next(&record->batch)) {  // the last epoch is done
      record->finished = true;
      record->global_step = -1;
      return OkStatus();
    }
    PS_RETURN_IF_ERROR(TableStepsOf(model_->lookups(), record->batch, &tables_));
    PS_RETURN_IF_ERROR(fleet_->Shard(&tables_));
    batch_pending_ = true;
  }
  PS_RETURN_IF_ERROR(overlap_ ? OverlappedStep(min_step, local_step, record)
                              : SerialStep(min_step, local_step, record));
  if (!record->finished) batch_pending_ = false;
  return OkStatus();
}

Status Trainer::SerialStep(int64_t min_step, int64_t local_step, StepRecord* record) {
  const auto t0 = clock_->Now();
  // The last push wrote the variables as they are after it: a pull now
  // would read the same (or the next push's of another worker).
  if (!values_pulled_) PS_RETURN_IF_ERROR(Pull(min_step));
  values_pulled_ = false;
  record->pull_secs = std::chrono::duration<double>(clock_->Now() - t0).count();
  if (ReachedMaxSteps(record)) return OkStatus();
  const auto t1 = clock_->Now();
  PS_ASSIGN_OR_RETURN(
      record->loss, model_->LossAndGradients(params_, InputOf(record->batch), record->batch.labels,
                                             &grads_, &row_grads_, nullptr));
  PS_RETURN_IF_ERROR(ProcessGradients(options_.gradients, names_, trainable_, params_, steps_[0],
                                      &grads_, &record->loss));
  PS_RETURN_IF_ERROR(CheckLoss(record->loss));
  if (options_.step_delay.count() > 0) clock_->SleepFor(options_.step_delay);
  const auto t2 = clock_->Now();
  record->compute_secs = std::chrono::duration<double>(t2 - t1).count();
  const uint64_t sequence = fleet_->NextPushSequence();
  PS_ASSIGN_OR_RETURN(record->pushed,
                      PushedOnce(PushWhole(local_step, sequence), sequence, local_step));
  record->push_secs = std::chrono::duration<double>(clock_->Now() - t2).count();
  if (record->pushed.values_pulled) {
    values_pulled_ = true;
    steps_ = record->pushed.steps;  // each ps's step as the values were written
  }
  return OkStatus();
}

nn::ModelInput Trainer::InputOf(const data::Batch& batch) const {
  nn::ModelInput input = ModelInputOf(model_->lookups(), batch, tables_);
  if (options_.example_learning_rate) {
    input.learning_rate = options_.example_learning_rate->At(steps_[0]);
  }
  return input;
}

bool Trainer::ReachedMaxSteps(StepRecord* record) const {
  if (options_.max_steps == 0 || steps_[0] < options_.max_steps) return false;
  record->finished = true;
  record->global_step = steps_[0];
  return true;
}

Status Trainer::OverlappedStep(int64_t min_step, int64_t local_step, StepRecord* record) {
  const auto t0 = clock_->Now();
  PS_ASSIGN_OR_RETURN(std::unique_ptr<StreamedPull> pull, StartPull(min_step));
  record->pull_secs = std::chrono::duration<double>(clock_->Now() - t0).count();
  if (ReachedMaxSteps(record)) return OkStatus();
  const auto t1 = clock_->Now();
  StepStreams streams(
      pull.get(),
      [&] { return fleet_->StartPush(options_.worker_index, local_step, steps_, options_.sync); },
      options_.gradients, names_, trainable_, params_, steps_[0], &grads_, clock_);
  auto computed = model_->LossAndGradients(params_, InputOf(record->batch), record->batch.labels,
                                           &grads_, &row_grads_, &streams);
  // A failed transfer under the model is the step's error (and retried);
  // the push, unfinished, is cut off and applies nothing.
  PS_RETURN_IF_ERROR(streams.transfer_error());
  PS_RETURN_IF_ERROR(pull->Finish());
  PS_RETURN_IF_ERROR(computed.status());
  PS_RETURN_IF_ERROR(streams.SendRest());
  record->loss = *computed + streams.added_loss();
  PS_RETURN_IF_ERROR(CheckLoss(record->loss));
  if (options_.step_delay.count() > 0) clock_->SleepFor(options_.step_delay);
  const auto t2 = clock_->Now();
  record->wait_secs = streams.waited_secs();
  record->compute_secs = std::chrono::duration<double>(t2 - t1).count() - record->wait_secs;
  PS_ASSIGN_OR_RETURN(record->pushed,
                      PushedOnce(streams.push()->Finish(), streams.push()->sequence(), local_step));
  record->push_secs = std::chrono::duration<double>(clock_->Now() - t2).count();
  return OkStatus();
}

Status Trainer::CheckLoss(float loss) const {
  if (std::isfinite(loss)) return OkStatus();
  return InvalidArgument(
      "loss is " + std::to_string(loss) + " at step " + std::to_string(steps_[0]) +
      " on worker:" + std::to_string(options_.worker_index) + "; nothing was pushed");
}

StatusOr<TrainerResult> Trainer::Run() {
  TrainerResult result;
  ProgressWindow window{clock_->Now()};
  int64_t min_step = 0;
  PS_RETURN_IF_ERROR(CheckGradientOptions(options_.gradients, names_, trainable_));
  StepRecord record;
  for (;;) {
    if (stop_ != nullptr && stop_->requested()) {
      LOG(INFO) << "worker:" << options_.worker_index << " stopping: " << stop_->reason();
      result.stopped = true;
      break;
    }
    if (EndedByChief()) break;
    if (!options_.sync && options_.staleness >= 0 && heartbeat_ != nullptr) {
      PS_RETURN_IF_ERROR(WaitWithinStaleness(result.local_steps));
      if (EndedByChief()) break;
    }
    StepRecord next;  // a fresh record around the batch buffers of the last
    next.batch = std::move(record.batch);
    record = std::move(next);
    const int64_t local_step = result.local_steps + 1;
    Status stepped = Step(min_step, local_step, &record);
    if (!stepped.ok()) {
      RenewBuffers();
      if (EndedByChief()) break;
      PS_RETURN_IF_ERROR(RetryAfter(stepped, &min_step));
      continue;
    }
    if (record.finished) {
      if (record.global_step >= 0) result.global_step = record.global_step;
      break;
    }
    backoff_.Reset();
    // Sync: pull again once every ps is past the step these gradients were
    // computed at.
    min_step = *std::min_element(steps_.begin(), steps_.end()) + 1;
    CountStep(record, &result, &window);
  }
  return result;
}

void Trainer::CountStep(const StepRecord& record, TrainerResult* result, ProgressWindow* window) {
  const float loss = record.loss;
  if (record.pushed.any(proto::STALE)) ++result->stale_gradients;
  result->global_step = record.pushed.global_step();
  if (result->local_steps == 0) result->first_loss = loss;
  result->last_loss = loss;
  ++result->local_steps;
  if (heartbeat_ != nullptr) {
    heartbeat_->set_local_step(result->local_steps);
    heartbeat_->set_loss(loss);
  }
  ProgressWindow& w = *window;
  w.pull_secs += record.pull_secs;
  w.wait_secs += record.wait_secs;
  w.compute_secs += record.compute_secs;
  w.push_secs += record.push_secs;
  w.examples += static_cast<int64_t>(record.batch.labels.size());
  ++w.steps;
  if (options_.log_frequency <= 0 || result->local_steps % options_.log_frequency != 0) return;
  const double secs = std::chrono::duration<double>(clock_->Now() - w.start).count();
  LOG(INFO) << ProgressLine(result->global_step, loss, options_.loss_is_sum, w.examples / secs,
                            secs / w.steps);
  VLOG(1) << "per step: pull " << 1e3 * w.pull_secs / w.steps << " ms, waiting for "
          << "variables " << 1e3 * w.wait_secs / w.steps << " ms, compute "
          << 1e3 * w.compute_secs / w.steps << " ms, push " << 1e3 * w.push_secs / w.steps << " ms";
  w = ProgressWindow{clock_->Now()};
}

}  // namespace pstrain
