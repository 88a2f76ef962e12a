#include "chief/supervisor.h"

#include <glog/logging.h>

#include <cstdio>

#include "chief/checkpoint.h"
#include "chief/evaluation.h"

namespace pstrain {

using Clock = std::chrono::steady_clock;

Supervisor::Supervisor(nn::Model* model, PsFleet* fleet, const data::ImageDataset* test_set,
                       StopNotice* stop, SupervisorOptions options)
    : model_(model),
      fleet_(fleet),
      test_set_(test_set),
      stop_(stop),
      options_(std::move(options)) {}

Status Supervisor::Start() {
  PS_RETURN_IF_ERROR(fleet_->WaitForPs(/*require_ready=*/false, stop_, options_.startup_timeout));
  std::vector<Tensor> values;
  for (const auto& v : model_->variables()) values.push_back(nn::InitialValue(v, options_.seed));
  PS_RETURN_IF_ERROR(fleet_->InitVariables(values, options_.init));
  const auto& placement = fleet_->placement();
  LOG(INFO) << "model ready: " << values.size() << " variables in " << placement.shards.size()
            << " shards on " << placement.num_ps << " ps tasks (placement " << std::hex
            << placement.fingerprint << std::dec << ")";
  for (int ps = 0; ps < placement.num_ps; ++ps) {
    LOG(INFO) << "  ps:" << ps << " holds " << placement.ShardsOnPs(ps).size() << " shards, "
              << placement.bytes_per_ps[ps] << " bytes";
  }
  const proto::SyncConfig& sync = options_.init.sync();
  if (sync.enabled()) {
    LOG(INFO) << "synchronous replicas: each step averages " << sync.replicas_to_aggregate()
              << " of " << sync.total_num_replicas() << " workers' gradients"
              << (sync.strict() ? " (strict: distinct workers)" : "");
  } else {
    LOG(INFO) << "asynchronous training: every gradient is applied as it arrives";
  }
  last_step_change_ = last_stall_log_ = Clock::now();
  return OkStatus();
}

void Supervisor::WatchWorkers(const proto::StatusResponse& st) {
  const double timeout = options_.init.heartbeat_timeout_secs();
  for (const proto::WorkerState& w : st.workers()) {
    const bool dead = !w.done() && w.seconds_since_heartbeat() > timeout;
    auto it = worker_dead_.find(w.worker());
    const bool was_dead = it != worker_dead_.end() && it->second;
    if (dead && !was_dead) {
      char secs[32];
      std::snprintf(secs, sizeof(secs), "%.1f", w.seconds_since_heartbeat());
      LOG(WARNING) << "worker:" << w.worker() << " declared dead: no heartbeat for " << secs
                   << " s (last at local step " << w.local_step() << ")";
    } else if (!dead && was_dead) {
      LOG(INFO) << "worker:" << w.worker() << " is back (local step " << w.local_step() << ")";
    }
    worker_dead_[w.worker()] = dead;
  }
}

void Supervisor::WatchSyncStep(const proto::StatusResponse& st) {
  const auto now = Clock::now();
  if (st.global_step() != last_step_) {
    last_step_ = st.global_step();
    last_step_change_ = now;
    return;
  }
  if (now - last_step_change_ < options_.step_timeout ||
      now - last_stall_log_ < options_.step_timeout) {
    return;
  }
  last_stall_log_ = now;
  std::string dead;
  for (const auto& [w, is_dead] : worker_dead_) {
    if (is_dead) dead += (dead.empty() ? "" : ", ") + ("worker:" + std::to_string(w));
  }
  LOG(WARNING) << "step " << st.global_step() << " has waited "
               << std::chrono::duration_cast<std::chrono::seconds>(now - last_step_change_).count()
               << " s: ps:0 holds " << st.pending_gradients() << " of "
               << options_.init.sync().replicas_to_aggregate() << " gradients"
               << (dead.empty() ? "" : "; dead: " + dead)
               << "; training resumes when enough workers push";
}

Status Supervisor::Monitor() {
  auto last_progress = Clock::now();
  auto last_contact = Clock::now();
  for (;;) {
    auto st = fleet_->CoordinatorStatus();
    if (st.ok()) {
      last_contact = Clock::now();
      WatchWorkers(*st);
      if (options_.init.sync().enabled()) WatchSyncStep(*st);
      if (st->done_workers_size() >= options_.num_workers) return OkStatus();
      if (Clock::now() - last_progress >= options_.progress_interval) {
        LOG(INFO) << "global_step " << st->global_step() << ", workers done "
                  << st->done_workers_size() << "/" << options_.num_workers
                  << (options_.init.sync().enabled()
                          ? ", stale gradients dropped " + std::to_string(st->stale_dropped())
                          : "");
        last_progress = Clock::now();
      }
    } else if (Clock::now() - last_contact > std::chrono::seconds(60)) {
      return st.status().Annotate("lost the ps holding global_step");
    }
    if (stop_->WaitFor(options_.poll_interval)) return Aborted("stopped: " + stop_->reason());
  }
}

Status Supervisor::Finish() {
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_RETURN_IF_ERROR(fleet_->PullVariables(&values, &steps));
  const int64_t step = steps[0];
  PS_ASSIGN_OR_RETURN(EvalResult eval, EvaluatePrecisionAt1(model_, values, *test_set_));
  char line[128];
  std::snprintf(line, sizeof(line), "final: step %lld, test accuracy %.4f (%lld examples)",
                static_cast<long long>(step), eval.accuracy(),
                static_cast<long long>(eval.examples));
  LOG(INFO) << line;

  std::vector<std::pair<std::string, const Tensor*>> named;
  const auto& vars = model_->variables();
  for (size_t i = 0; i < vars.size(); ++i) named.emplace_back(vars[i].name, &values[i]);
  PS_ASSIGN_OR_RETURN(std::string prefix, WriteCheckpoint(options_.train_dir, step, named));
  const std::string base = CheckpointName(step);
  PS_RETURN_IF_ERROR(WriteCheckpointState(options_.train_dir, {base, {base}}));
  LOG(INFO) << "wrote the final variables to " << prefix;

  Status s = fleet_->ShutdownAll("training done");
  if (!s.ok()) LOG(WARNING) << "shutting the ps tasks down: " << s.ToString();
  return OkStatus();
}

}  // namespace pstrain
