#include "worker/trainer.h"

#include <glog/logging.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

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

Trainer::Trainer(nn::Model* model, PsFleet* fleet, data::BatchQueue* input,
                 const StopNotice* stop, const TrainerOptions& options)
    : model_(model), fleet_(fleet), input_(input), stop_(stop), options_(options) {}

StatusOr<TrainerResult> Trainer::Run() {
  using Clock = std::chrono::steady_clock;
  TrainerResult result;
  std::vector<Tensor> params, grads;
  data::Batch batch;
  int64_t window_examples = 0, window_steps = 0;
  auto window_start = Clock::now();
  for (;;) {
    if (stop_ != nullptr && stop_->requested()) {
      LOG(INFO) << "worker:" << options_.worker_index << " stopping: " << stop_->reason();
      break;
    }
    int64_t global_step = 0;
    PS_RETURN_IF_ERROR(fleet_->PullVariables(&params, &global_step));
    if (options_.max_steps > 0 && global_step >= options_.max_steps) {
      result.global_step = global_step;
      break;
    }
    if (!input_->Next(&batch)) break;  // the last epoch is done
    PS_ASSIGN_OR_RETURN(float loss,
                        model_->LossAndGradients(params, batch.images, batch.labels, &grads));
    if (!std::isfinite(loss)) {
      return InvalidArgument("loss is " + std::to_string(loss) + " at step " +
                             std::to_string(global_step) + " on worker:" +
                             std::to_string(options_.worker_index) + "; nothing was pushed");
    }
    PS_ASSIGN_OR_RETURN(result.global_step,
                        fleet_->PushGradients(grads, options_.worker_index));
    if (result.local_steps == 0) result.first_loss = loss;
    result.last_loss = loss;
    ++result.local_steps;
    window_examples += static_cast<int64_t>(batch.labels.size());
    ++window_steps;
    if (options_.log_frequency > 0 && result.local_steps % options_.log_frequency == 0) {
      const double secs = std::chrono::duration<double>(Clock::now() - window_start).count();
      LOG(INFO) << ProgressLine(result.global_step, loss, window_examples / secs,
                                secs / window_steps);
      window_examples = window_steps = 0;
      window_start = Clock::now();
    }
  }
  return result;
}

}  // namespace pstrain
