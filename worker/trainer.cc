#include "worker/trainer.h"

#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <thread>
#include <algorithm>

namespace pstrain {

std::string ProgressLine(int64_t step, float loss, double examples_per_sec,
                         double sec_per_batch) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
      1000);
  std::tm tm;
  localtime_r(&t, &tm);
  char when[32];
  std::strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
  char line[160];
  std::snprintf(line, sizeof(line), "%s.%03d: step %lld, loss = %.2f (%.1f examples/sec; %.3f sec/batch)",
                when, ms, static_cast<long long>(step), loss, examples_per_sec, sec_per_batch);
  return line;
}

Trainer::Trainer(nn::Model* model, PsFleet* fleet, data::BatchSource* input,
                 HeartbeatSender* heartbeat, const StopNotice* stop,
                 const TrainerOptions& options)
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
      backoff_(std::chrono::milliseconds(100), std::chrono::seconds(5), options.retry_budget) {}

Status Trainer::Pull(int64_t min_step) {
  const auto wait = options_.sync ? options_.step_timeout : std::chrono::milliseconds(0);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    Status s = fleet_->PullVariables(&params_, &steps_, options_.sync ? min_step : 0, wait);
    if (s.code() != Code::kDeadlineExceeded || !options_.sync) return s;
    if (EndedByChief()) return s;
    LOG(WARNING) << "worker:" << options_.worker_index << " has waited "
                 << std::chrono::duration_cast<std::chrono::seconds>(
                        std::chrono::steady_clock::now() - start)
                        .count()
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
  auto last_log = std::chrono::steady_clock::now();
  for (;;) {
    PS_ASSIGN_OR_RETURN(int64_t slowest, heartbeat_->Refresh());
    if (slowest < 0 || local_step - slowest <= options_.staleness || EndedByChief()) {
      return OkStatus();
    }
    if (std::chrono::steady_clock::now() - last_log > std::chrono::seconds(5)) {
      LOG(INFO) << "worker:" << options_.worker_index << " is at local step " << local_step
                << ", " << local_step - slowest << " ahead of the slowest live worker; waiting";
      last_log = std::chrono::steady_clock::now();
    }
    if (stop_ != nullptr && stop_->requested()) return Aborted("stopped: " + stop_->reason());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Status Trainer::RetryAfter(const Status& error, int64_t* min_step) {
  if (!IsRetryable(error)) return error;
  LOG(WARNING) << "worker:" << options_.worker_index << ": " << error.ToString()
               << "; retrying in " << backoff_.next_wait().count() << " ms";
  if (!backoff_.Wait(stop_)) {
    if (stop_ != nullptr && stop_->requested()) return Aborted("stopped: " + stop_->reason());
    return error.Annotate("gave up retrying");
  }
  // A ps may have been restored to an older step: do not wait for the next.
  *min_step = 0;
  return OkStatus();
}

StatusOr<TrainerResult> Trainer::Run() {
  using Clock = std::chrono::steady_clock;
  TrainerResult result;
  std::vector<Tensor> grads;
  data::Batch batch;
  int64_t window_examples = 0, window_steps = 0;
  double pull_secs = 0, compute_secs = 0, push_secs = 0;  // this window's, for --v=1
  auto window_start = Clock::now();
  int64_t min_step = 0;
  for (;;) {
    if (stop_ != nullptr && stop_->requested()) {
      LOG(INFO) << "worker:" << options_.worker_index << " stopping: " << stop_->reason();
      break;
    }
    if (EndedByChief()) break;
    if (!options_.sync && options_.staleness >= 0 && heartbeat_ != nullptr) {
      PS_RETURN_IF_ERROR(WaitWithinStaleness(result.local_steps));
      if (EndedByChief()) break;
    }
    auto t0 = Clock::now();
    Status pulled = Pull(min_step);
    if (!pulled.ok()) {
      if (EndedByChief()) break;
      PS_RETURN_IF_ERROR(RetryAfter(pulled, &min_step));
      continue;
    }
    auto t1 = Clock::now();
    const int64_t global_step = steps_[0];
    if (options_.max_steps > 0 && global_step >= options_.max_steps) {
      result.global_step = global_step;
      break;
    }
    if (!input_->Next(&batch)) break;  // the last epoch is done
    PS_ASSIGN_OR_RETURN(float loss,
                        model_->LossAndGradients(params_, batch.images, batch.labels, &grads));
    PS_RETURN_IF_ERROR(
        ProcessGradients(options_.gradients, names_, trainable_, params_, global_step,
                         &grads, &loss));
    if (!std::isfinite(loss)) {
      return InvalidArgument("loss is " + std::to_string(loss) + " at step " +
                             std::to_string(global_step) + " on worker:" +
                             std::to_string(options_.worker_index) + "; nothing was pushed");
    }
    if (options_.step_delay.count() > 0) std::this_thread::sleep_for(options_.step_delay);
    auto t2 = Clock::now();
    auto push = fleet_->PushGradients(grads, options_.worker_index, result.local_steps + 1, steps_,
                                      options_.sync);
    if (!push.ok()) {
      PS_RETURN_IF_ERROR(RetryAfter(push.status(), &min_step));
      continue;
    }
    backoff_.Reset();
    const PsFleet::PushResult& pushed = *push;
    pull_secs += std::chrono::duration<double>(t1 - t0).count();
    compute_secs += std::chrono::duration<double>(t2 - t1).count();
    push_secs += std::chrono::duration<double>(Clock::now() - t2).count();
    if (pushed.any(proto::STALE)) ++result.stale_gradients;
    // Sync: pull again once every ps is past the step these gradients were
    // computed at.
    min_step = *std::min_element(steps_.begin(), steps_.end()) + 1;
    result.global_step = pushed.global_step();
    if (result.local_steps == 0) result.first_loss = loss;
    result.last_loss = loss;
    ++result.local_steps;
    if (heartbeat_ != nullptr) {
      heartbeat_->set_local_step(result.local_steps);
      heartbeat_->set_loss(loss);
    }
    window_examples += static_cast<int64_t>(batch.labels.size());
    ++window_steps;
    if (options_.log_frequency > 0 && result.local_steps % options_.log_frequency == 0) {
      const double secs = std::chrono::duration<double>(Clock::now() - window_start).count();
      LOG(INFO) << ProgressLine(result.global_step, loss, window_examples / secs,
                                secs / window_steps);
      VLOG(1) << "per step: pull " << 1e3 * pull_secs / window_steps << " ms, compute "
              << 1e3 * compute_secs / window_steps << " ms, push "
              << 1e3 * push_secs / window_steps << " ms";
      window_examples = window_steps = 0;
      pull_secs = compute_secs = push_secs = 0;
      window_start = Clock::now();
    }
  }
  return result;
}

}  // namespace pstrain
