#include "chief/supervisor.h"

#include <glog/logging.h>

#include <cstdio>

#include "chief/evaluation.h"
#include "chief/table_checkpoints.h"
#include "chief/tf_names.h"
#include "chief/training_done.h"
#include "ps/ps_core.h"
#include "ps/variable_store.h"

namespace pstrain {

namespace {

// The mean of the workers' latest losses, from their heartbeats; 0 when no
// worker has reported one yet.
double MeanWorkerLoss(const proto::StatusResponse& st) {
  double loss = 0;
  int reporting = 0;
  for (const proto::WorkerState& w : st.workers()) {
    if (w.loss() > 0) {
      loss += w.loss();
      ++reporting;
    }
  }
  return reporting > 0 ? loss / reporting : 0;
}

}  // namespace

Supervisor::Supervisor(nn::Model* model, PsFleet* fleet, const data::ImageDataset* test_set,
                       const data::ImageDataset* train_set, StopNotice* stop,
                       SupervisorOptions options)
    : model_(model),
      fleet_(fleet),
      test_set_(test_set),
      train_set_(train_set),
      stop_(stop),
      options_(std::move(options)),
      checkpoints_({options_.train_dir, options_.max_to_keep,
                    options_.keep_checkpoint_every_n_hours, options_.files}),
      incarnations_(fleet->num_ps(), 0),
      ps_health_(fleet->num_ps()),
      clock_(options_.clock),
      started_(clock_->Now()),
      roster_(options_.num_workers, options_.init.heartbeat_timeout_secs()),
      steps_(clock_, std::chrono::duration_cast<Clock::Duration>(options_.step_timeout)),
      checkpoint_timer_(clock_, std::chrono::duration_cast<Clock::Duration>(
                                    std::chrono::duration<double>(options_.save_checkpoint_secs))),
      eval_timer_(clock_, std::chrono::duration_cast<Clock::Duration>(
                              std::chrono::duration<double>(options_.eval_secs))),
      progress_timer_(clock_, options_.progress_interval),
      final_evaluation_{model,          fleet,
                        test_set,       options_.test_rows,
                        options_.input, options_.eval_use_moving_averages} {
  ps_tables_.resize(fleet->num_ps());
  checkpoints_.SetFormat(options_.checkpoint_format,
                         TfCheckpointNames(model->variables(), options_.init.optimizer()));
}

Status Supervisor::RestoreOrInitialize(const std::string& why) {
  proto::InitHeader header = options_.init;
  Checkpoint full;
  auto ckpt = checkpoints_.LoadLatest(&full);
  if (ckpt.ok()) {
    header.set_global_step(ckpt->global_step);
    // The ps tasks serve no worker until their tables' rows are back too:
    // a step on tables still empty would be overwritten by the rows.
    header.set_rows_follow(!fleet_->tables().empty());
    PS_RETURN_IF_ERROR(fleet_->RestoreState(ckpt->tensors, header));
    PS_RETURN_IF_ERROR(RestoreTables(fleet_, *ckpt, ckpt->delta_base_step ? &full : nullptr));
    if (header.rows_follow()) PS_RETURN_IF_ERROR(fleet_->FinishRestore());
    last_saved_step_ = ckpt->global_step;
    LOG(INFO) << why << ": restored every ps from " << options_.train_dir << "/"
              << CheckpointName(ckpt->global_step) << " (global_step " << ckpt->global_step << ")";
    return OkStatus();
  }
  if (ckpt.status().code() != Code::kNotFound) return ckpt.status();
  std::vector<Tensor> values;
  size_t warm = 0;
  for (const auto& v : model_->variables()) {
    const bool given = options_.warm_start != nullptr && options_.warm_start->count(v.name) > 0;
    values.push_back(given ? options_.warm_start->at(v.name) : nn::InitialValue(v, options_.seed));
    warm += given;
  }
  header.set_global_step(0);
  // Slots and moving averages warm-started too: the ps tasks take them as
  // they take a checkpoint's.
  const size_t slots = options_.warm_start == nullptr ? 0 : options_.warm_start->size() - warm;
  if (slots > 0) {
    PsFleet::State state = *options_.warm_start;
    for (size_t i = 0; i < values.size(); ++i)
      state.emplace(model_->variables()[i].name, values[i]);
    PS_RETURN_IF_ERROR(fleet_->RestoreState(state, header));
  } else {
    PS_RETURN_IF_ERROR(fleet_->InitVariables(values, header));
  }
  if (warm > 0) {
    LOG(INFO) << why << ": no checkpoint in " << options_.train_dir << "; warm-started " << warm
              << " of " << values.size() << " variables"
              << (slots > 0 ? " and " + std::to_string(slots) + " of their slots" : std::string())
              << " from " << options_.warm_start_from << ", the others from seed " << options_.seed;
  } else {
    LOG(INFO) << why << ": no checkpoint in " << options_.train_dir
              << "; initialized every variable from seed " << options_.seed;
  }
  return OkStatus();
}

Status Supervisor::CheckPsIncarnations(bool* needs_restore) {
  *needs_restore = false;
  for (int ps = 0; ps < fleet_->num_ps(); ++ps) {
    auto st = fleet_->client(ps)->GetReadiness(std::chrono::seconds(2));
    ps_health_[ps].task = "ps:" + std::to_string(ps);
    if (!st.ok()) {  // down: it will come back with a new incarnation
      ps_health_[ps].state = "unreachable";
      ps_health_[ps].detail = st.status().message();
      continue;
    }
    ps_health_[ps].state = st->ready() ? "running" : "restoring";
    ps_tables_[ps].assign(st->tables().begin(), st->tables().end());
    ps_health_[ps].detail = std::to_string(st->num_variables()) + " variables, " +
                            std::to_string(st->num_bytes() >> 20) + " MiB with slots";
    const bool changed = incarnations_[ps] != 0 && st->incarnation() != incarnations_[ps];
    if (changed || !st->ready()) {
      LOG(WARNING) << fleet_->client(ps)->name()
                   << (changed ? " restarted (new incarnation)" : " holds no variables")
                   << "; pausing training to restore it";
      *needs_restore = true;
    }
    incarnations_[ps] = st->incarnation();
  }
  return OkStatus();
}

void Supervisor::LogModelReady() const {
  const auto& placement = fleet_->placement();
  LOG(INFO) << "model ready: " << model_->variables().size() << " variables in "
            << placement.shards.size() << " shards on " << placement.num_ps
            << " ps tasks (placement " << std::hex << placement.fingerprint << std::dec << ")";
  for (int ps = 0; ps < placement.num_ps; ++ps) {
    LOG(INFO) << "  ps:" << ps << " holds " << placement.ShardsOnPs(ps).size() << " shards, "
              << placement.bytes_per_ps[ps] << " bytes";
  }
  const proto::OptimizerConfig& opt = options_.init.optimizer();
  LOG(INFO) << "optimizer " << opt.name() << ", learning rate " << opt.learning_rate()
            << (opt.lr_schedule().kind() == proto::LrScheduleConfig::EXPONENTIAL_DECAY
                    ? " decayed by " + std::to_string(opt.lr_schedule().decay_rate()) + " every " +
                          std::to_string(opt.lr_schedule().decay_steps()) + " steps" +
                          (opt.lr_schedule().staircase() ? " (staircase)" : "")
                    : "")
            << (options_.init.ema_decay() > 0
                    ? ", moving averages with decay " + std::to_string(options_.init.ema_decay())
                    : "");
  const proto::SyncConfig& sync = options_.init.sync();
  if (sync.enabled()) {
    LOG(INFO) << "synchronous replicas: each step averages " << sync.replicas_to_aggregate()
              << " of " << sync.total_num_replicas() << " workers' gradients"
              << (sync.strict() ? " (strict: distinct workers)" : "");
  } else {
    LOG(INFO) << "asynchronous training: every gradient is applied as it arrives";
  }
}

Status Supervisor::Start() {
  if (options_.eval_secs > 0 && options_.evaluation_thread == nullptr) {
    return InvalidArgument("evaluating every eval_secs needs an evaluation thread");
  }
  PS_RETURN_IF_ERROR(fleet_->WaitForPs(/*require_ready=*/false, stop_, options_.startup_timeout));
  bool all_ready = true;
  int64_t step = 0;
  for (int ps = 0; ps < fleet_->num_ps(); ++ps) {
    PS_ASSIGN_OR_RETURN(auto st, fleet_->client(ps)->GetReadiness(std::chrono::seconds(5)));
    all_ready &= st.ready() && st.placement_fingerprint() == fleet_->placement().fingerprint;
    if (ps == 0) step = st.global_step();
    incarnations_[ps] = st.incarnation();
  }
  if (all_ready) {
    LOG(INFO) << "every ps already holds the model (global_step " << step
              << "): a restarted chief carries on";
  } else {
    PS_RETURN_IF_ERROR(RestoreOrInitialize("starting"));
  }
  // Training (again) in this dir: its job has not ended.
  PS_RETURN_IF_ERROR(ClearTrainingDone(options_.train_dir));
  training_started_ = clock_->Now();
  eval_timer_.Done();
  model_ready_ = true;
  LogModelReady();
  if (options_.save_summaries_steps > 0) {
    PS_ASSIGN_OR_RETURN(summaries_, TrainingSummaries::Create(options_.train_dir, model_,
                                                              train_set_, options_.input));
    if (train_set_ != nullptr) PS_RETURN_IF_ERROR(summaries_->InputImages(step));
    PS_RETURN_IF_ERROR(summaries_->Flush());
    LOG(INFO) << "TensorBoard summaries: " << summaries_->path();
  }
  LOG(INFO) << "checkpoints: " << options_.train_dir << "/model.ckpt-STEP (every "
            << options_.save_checkpoint_secs << " s"
            << (options_.save_checkpoint_steps > 0
                    ? " and " + std::to_string(options_.save_checkpoint_steps) + " steps"
                    : "")
            << ", keeping " << options_.max_to_keep << ")";
  summary_window_start_ = clock_->Now();
  summary_window_step_ = last_summary_step_ = step;
  steps_.Reset(step);
  progress_timer_.Done();
  return OkStatus();
}

Status Supervisor::SaveCheckpoint(const char* why) {
  PsFleet::State state;
  PsFleet::PsSteps steps;
  PS_RETURN_IF_ERROR(fleet_->PullState(&state, &steps));
  if (steps[0] == last_saved_step_) {  // nothing new since: the timer starts again
    checkpoint_timer_.Done();
    return OkStatus();
  }
  const Clock::TimePoint start = clock_->Now();
  // Tables: a delta of the newest full checkpoint this process saved, while
  // there are deltas to go; else a full one.
  const bool tables = !fleet_->tables().empty();
  const bool delta = tables && options_.delta_checkpoints > 0 && last_full_step_ >= 0 &&
                     deltas_since_full_ < options_.delta_checkpoints;
  const bool start_deltas = tables && options_.delta_checkpoints > 0 && !delta;
  PS_ASSIGN_OR_RETURN(
      std::string prefix,
      checkpoints_.Save(
          steps[0], state,
          [&](CheckpointWriter* writer) { return SaveTables(fleet_, writer, delta, start_deltas); },
          delta ? std::optional<int64_t>(last_full_step_) : std::nullopt));
  if (delta) {
    ++deltas_since_full_;
  } else {
    last_full_step_ = steps[0];
    deltas_since_full_ = 0;
  }
  last_saved_step_ = steps[0];
  checkpoint_timer_.Done();
  LOG(INFO) << "saved " << (delta ? "delta " : "") << "checkpoint " << prefix << " (" << why << ", "
            << std::chrono::duration_cast<std::chrono::milliseconds>(clock_->Now() - start).count()
            << " ms)";
  return OkStatus();
}

Status Supervisor::WriteSummaries(const proto::StatusResponse& st) {
  const int64_t step = st.global_step();
  if (summaries_ == nullptr || step < last_summary_step_ + options_.save_summaries_steps) {
    return OkStatus();
  }
  const double secs = std::chrono::duration<double>(clock_->Now() - summary_window_start_).count();
  const double steps_per_sec = secs > 0 ? (step - summary_window_step_) / secs : 0;
  const int per_step =
      options_.init.sync().enabled() ? options_.init.sync().replicas_to_aggregate() : 1;
  PS_RETURN_IF_ERROR(summaries_->Scalars(step, MeanWorkerLoss(st), st.learning_rate(),
                                         steps_per_sec,
                                         steps_per_sec * options_.batch_size * per_step));
  for (const TableShardMetrics& t : TableShards()) {
    PS_RETURN_IF_ERROR(
        summaries_->TableShard(step, t.table, t.ps, t.rows, t.bytes, t.admitted, t.expired));
  }
  std::vector<Tensor> params;
  PS_RETURN_IF_ERROR(fleet_->PullVariables(&params, nullptr));
  PS_RETURN_IF_ERROR(summaries_->Histograms(step, params));
  PS_RETURN_IF_ERROR(summaries_->Flush());
  last_summary_step_ = step;
  summary_window_step_ = step;
  summary_window_start_ = clock_->Now();
  return OkStatus();
}

Status Supervisor::SendLiveWorkers() {
  const std::vector<int> live = roster_.InState(WorkerRoster::State::kLive);
  if (sent_live_ == live) return OkStatus();
  PS_RETURN_IF_ERROR(fleet_->SetLiveWorkers(live));
  const int r = options_.init.sync().replicas_to_aggregate();
  const std::vector<int> done = roster_.InState(WorkerRoster::State::kDone);
  const std::vector<int> dead = roster_.InState(WorkerRoster::State::kDead);
  if (static_cast<int>(live.size()) < r) {
    LOG(WARNING) << live.size() << " of " << options_.num_workers << " workers can still push ("
                 << WorkerList(live) << "; finished: " << WorkerList(done)
                 << "; dead: " << WorkerList(dead) << "): each step now averages the gradients of "
                 << (live.empty() ? std::string("whatever it holds")
                                  : "all " + std::to_string(live.size()))
                 << " instead of " << r;
  } else if (sent_live_.has_value() && static_cast<int>(sent_live_->size()) < r) {
    LOG(INFO) << live.size() << " workers can push again (" << WorkerList(live)
              << "): each step averages " << r << " gradients";
  }
  sent_live_ = live;
  return OkStatus();
}

void Supervisor::LogStalledStep(const proto::StatusResponse& st) {
  const std::vector<int> dead = roster_.InState(WorkerRoster::State::kDead);
  LOG(WARNING) << "step " << st.global_step() << " has waited "
               << std::chrono::duration_cast<std::chrono::seconds>(steps_.still_for()).count()
               << " s: ps:0 holds " << st.pending_gradients() << " of " << st.required_gradients()
               << " gradients" << (dead.empty() ? "" : "; dead: " + WorkerList(dead))
               << "; training resumes when enough workers push";
}

Status Supervisor::Monitor() {
  Clock::TimePoint last_contact = clock_->Now();  // ps 0's last answer
  for (;;) {
    PS_RETURN_IF_ERROR(RecoverLostPs());
    auto st = fleet_->CoordinatorStatus();
    if (st.ok() && FromAnEmptyPs(*st)) continue;  // the next poll restores it
    if (st.ok()) {
      last_contact = clock_->Now();
      // A failed worker counts as done: its failure ends the job first.
      const bool over = ObserveWorkers(*st);
      PS_RETURN_IF_ERROR(CheckWorkersCanGoOn());
      if (over) return OkStatus();
      RunSchedules(*st);
      ReportProgress(*st);
    } else if (clock_->Now() - last_contact > options_.ps_lost_timeout) {
      return st.status().Annotate("lost the ps holding global_step");
    }
    if (stop_->WaitFor(options_.poll_interval, clock_)) {
      return Aborted("stopped: " + stop_->reason());
    }
  }
}

Status Supervisor::RecoverLostPs() {
  bool needs_restore = false;
  PS_RETURN_IF_ERROR(CheckPsIncarnations(&needs_restore));
  if (!needs_restore) return OkStatus();
  PS_RETURN_IF_ERROR(fleet_->WaitForPs(/*require_ready=*/false, stop_, options_.startup_timeout));
  PS_RETURN_IF_ERROR(RestoreOrInitialize("a ps lost its variables"));
  ++restores_;
  sent_live_.reset();  // a restarted ps knows nothing of the workers
  for (int ps = 0; ps < fleet_->num_ps(); ++ps) incarnations_[ps] = 0;
  PS_RETURN_IF_ERROR(CheckPsIncarnations(&needs_restore));
  LOG(INFO) << "training resumed";
  return OkStatus();
}

bool Supervisor::FromAnEmptyPs(const proto::StatusResponse& st) const {
  return !st.ready() || (incarnations_[0] != 0 && st.incarnation() != incarnations_[0]);
}

bool Supervisor::ObserveWorkers(const proto::StatusResponse& st) {
  roster_.Update(st);
  const bool stalled = steps_.Observe(st.global_step());
  if (options_.init.sync().enabled()) {
    Status sent = SendLiveWorkers();
    if (!sent.ok()) LOG(WARNING) << "telling the ps tasks the live workers: " << sent.ToString();
    if (stalled) LogStalledStep(st);
  }
  PublishMetrics(st);
  if (!roster_.JobOver()) return false;
  const std::vector<int> dead = roster_.InState(WorkerRoster::State::kDead);
  if (!dead.empty()) {
    LOG(WARNING) << "no worker can still push (finished: "
                 << WorkerList(roster_.InState(WorkerRoster::State::kDone))
                 << "; dead: " << WorkerList(dead) << "): training ends";
  }
  return true;
}

Status Supervisor::CheckWorkersCanGoOn() const {
  if (!roster_.failure().empty()) {
    return FailedPrecondition(roster_.failure() + " (the chief runs model " + options_.model_name +
                              ")");
  }
  const std::vector<int> never = roster_.NeverHeardFrom();
  if (!never.empty() && clock_->Now() - training_started_ > options_.startup_timeout) {
    return FailedPrecondition(
        WorkerList(never) + " never reported to ps:0 within --startup_timeout_secs (" +
        std::to_string(options_.startup_timeout.count()) +
        " s): not started, failed before it could, or started with another cluster spec");
  }
  return OkStatus();
}

void Supervisor::EndOnFailure(const Status& why) {
  const std::string reason = "the job failed: " + why.message();
  LOG(ERROR) << reason;
  Status s = fleet_->client(0)->EndTraining(reason.substr(0, PsCore::kMaxReasonBytes));
  if (!s.ok()) LOG(WARNING) << "telling the workers to stop: " << s.ToString();
  if (model_ready_) {
    s = SaveCheckpoint("the job failed");
    if (!s.ok()) LOG(WARNING) << "checkpoint not saved: " << s.ToString();
  }
  s = fleet_->ShutdownAll(reason);
  if (!s.ok()) LOG(WARNING) << "shutting the ps tasks down: " << s.ToString();
}

void Supervisor::RunSchedules(const proto::StatusResponse& st) {
  const bool by_steps = options_.save_checkpoint_steps > 0 &&
                        st.global_step() >= last_saved_step_ + options_.save_checkpoint_steps;
  if (by_steps || checkpoint_timer_.Due()) {
    // A save that fails (a full disk, a failing fsync) leaves the last
    // checkpoint whole; training goes on, and each poll tries again. Said
    // once, not every poll, until a save succeeds.
    Status s = SaveCheckpoint(by_steps ? "every N steps" : "timer");
    if (!s.ok() && !save_failing_) {
      LOG(WARNING) << "checkpoint not saved: " << s.ToString()
                   << "; training goes on, the last checkpoint stays as it was, and saving is "
                      "tried again at every poll (said again once it works)";
    } else if (s.ok() && save_failing_) {
      LOG(INFO) << "checkpoints are saved again";
    }
    save_failing_ = !s.ok();
  }
  Status s = WriteSummaries(st);
  if (!s.ok()) LOG(WARNING) << "summaries not written: " << s.ToString();
  s = EvaluateWhileTraining();
  if (!s.ok()) LOG(WARNING) << "evaluation while training: " << s.ToString();
  if (!end_reason_.empty()) {
    // Every poll, so that a ps 0 restored meanwhile hears it too.
    s = fleet_->client(0)->EndTraining(end_reason_);
    if (!s.ok()) LOG(WARNING) << "telling the workers to stop: " << s.ToString();
  }
}

void Supervisor::ReportProgress(const proto::StatusResponse& st) {
  if (!progress_timer_.Due()) return;
  const std::vector<int> never = roster_.NeverHeardFrom();
  LOG(INFO) << "global_step " << st.global_step() << ", loss " << MeanWorkerLoss(st)
            << (options_.loss_is_sum ? " (batch sums" : " (batch means")
            << ", the workers' latest averaged), learning rate " << st.learning_rate()
            << ", workers done " << st.done_workers_size() << "/" << options_.num_workers
            << (never.empty() ? "" : " (never heard from: " + WorkerList(never) + ")")
            << (options_.init.sync().enabled()
                    ? ", stale gradients dropped " + std::to_string(st.stale_dropped())
                    : "");
  progress_timer_.Done();
}

std::vector<TableShardMetrics> Supervisor::TableShards() const {
  std::vector<TableShardMetrics> out;
  for (int ps = 0; ps < static_cast<int>(ps_tables_.size()); ++ps) {
    for (const proto::TableState& t : ps_tables_[ps]) {
      out.push_back({t.name(), ps, t.rows(), t.bytes(), t.admitted(), t.expired()});
    }
  }
  return out;
}

void Supervisor::ListWorkers(const proto::StatusResponse& st, ChiefMetrics* metrics) const {
  ChiefMetrics& m = *metrics;
  const double timeout = options_.init.heartbeat_timeout_secs();
  std::map<int, const proto::WorkerState*> seen;
  for (const proto::WorkerState& w : st.workers()) seen[w.worker()] = &w;
  // Every worker of a small job; of a large one, those not running first
  // (then the running ones), at most kListedWorkers: the rest are counted.
  const bool all_listed = options_.num_workers <= kListedWorkers;
  std::vector<TaskHealth> running;
  int listed = 0;
  for (int i = 0; i < options_.num_workers; ++i) {
    TaskHealth h{"worker:" + std::to_string(i), "unreachable", "no heartbeat yet"};
    auto it = seen.find(i);
    if (it != seen.end()) {
      const proto::WorkerState& w = *it->second;
      char detail[96];
      std::snprintf(detail, sizeof(detail), "local step %lld, last heartbeat %.1f s ago",
                    static_cast<long long>(w.local_step()), w.seconds_since_heartbeat());
      h.detail = detail;
      h.state = w.done() ? "done" : w.seconds_since_heartbeat() > timeout ? "dead" : "running";
    }
    ++m.workers_by_state[h.state];
    if (all_listed) {
      m.tasks.push_back(std::move(h));
    } else if (h.state != "running" && listed < kListedWorkers) {
      m.tasks.push_back(std::move(h));
      ++listed;
    } else if (h.state == "running" && static_cast<int>(running.size()) < kListedWorkers) {
      running.push_back(std::move(h));
    } else {
      ++(TaskIsUp(h.state) ? m.unlisted_workers_up : m.unlisted_workers_down);
    }
  }
  for (TaskHealth& h : running) {
    if (listed < kListedWorkers) {
      m.tasks.push_back(std::move(h));
      ++listed;
    } else {
      ++m.unlisted_workers_up;
    }
  }
}

void Supervisor::PublishMetrics(const proto::StatusResponse& st) {
  if (options_.board == nullptr) return;
  const Clock::TimePoint now = clock_->Now();
  ChiefMetrics m;
  m.global_step = st.global_step();
  m.loss = MeanWorkerLoss(st);
  if (m.loss > 0 && (loss_history_.empty() || loss_history_.back().step != m.global_step)) {
    loss_history_.push_back({m.global_step, m.loss});
    if (loss_history_.size() > 1000) loss_history_.erase(loss_history_.begin());
  }
  m.loss_history = loss_history_;
  m.learning_rate = st.learning_rate();
  m.steps_per_sec = steps_.steps_per_sec();
  const proto::SyncConfig& sync = options_.init.sync();
  m.examples_per_sec =
      m.steps_per_sec * options_.batch_size * (sync.enabled() ? sync.replicas_to_aggregate() : 1);
  m.stale_gradients_dropped = st.stale_dropped();
  if (checkpoints_.latest_step() >= 0) {
    m.seconds_since_checkpoint = std::chrono::duration<double>(checkpoint_timer_.since()).count();
  }
  m.restores = restores_;
  m.mode = sync.enabled() ? "sync " + std::to_string(sync.replicas_to_aggregate()) + "/" +
                                std::to_string(sync.total_num_replicas())
                          : "async";
  m.model = options_.model_name;
  m.train_dir = options_.train_dir;
  m.uptime_secs = std::chrono::duration<double>(now - started_).count();
  m.tasks.push_back({"chief:0", "running", "supervising"});
  for (const TaskHealth& h : ps_health_) m.tasks.push_back(h);
  m.tables = TableShards();
  ListWorkers(st, &m);
  options_.board->Publish(std::move(m));
}

Status Supervisor::Finish() {
  PsFleet::State state;
  PsFleet::PsSteps steps;
  PS_RETURN_IF_ERROR(fleet_->PullState(&state, &steps));
  const int64_t step = steps[0];
  // With the tables' rows, as every checkpoint (a delta where one is due).
  if (step != last_saved_step_) PS_RETURN_IF_ERROR(SaveCheckpoint("final"));
  PS_RETURN_IF_ERROR(MarkTrainingDone(options_.train_dir, "model.ckpt-" + std::to_string(step)));
  if (EvaluationThread* thread = options_.evaluation_thread; thread != nullptr) {
    // The states still waiting were taken while training, at their times:
    // their evaluations are reported, unless a reached target ended it.
    if (!end_reason_.empty()) thread->Cancel();
    while (std::optional<EvaluationThread::Outcome> done = thread->WaitAndTake()) {
      PS_RETURN_IF_ERROR(ReportEvaluation(*done));
    }
  }
  PS_ASSIGN_OR_RETURN(EvalResult eval, final_evaluation_.Evaluate(state));
  char line[128];
  std::snprintf(line, sizeof(line), "final: step %lld, test accuracy %.4f (%lld examples)",
                static_cast<long long>(step), eval.accuracy(),
                static_cast<long long>(eval.examples));
  LOG(INFO) << line << eval.MetricsSuffix();
  if (summaries_ != nullptr) {
    PS_RETURN_IF_ERROR(SummarizeEval(step, eval));
    PS_RETURN_IF_ERROR(summaries_->Flush());
  }
  Status s = fleet_->ShutdownAll("training done");
  if (!s.ok()) LOG(WARNING) << "shutting the ps tasks down: " << s.ToString();
  return OkStatus();
}

Status Supervisor::SummarizeEval(int64_t step, const EvalResult& eval) {
  return ForEachEvalScalar(eval, [&](const std::string& tag, double value) {
    return summaries_->Accuracy(step, tag, value);
  });
}

Status Supervisor::EvaluateWhileTraining() {
  EvaluationThread* const thread = options_.evaluation_thread;
  if (thread == nullptr) return OkStatus();
  if (std::optional<EvaluationThread::Outcome> done = thread->Take()) {
    eval_progress_ = clock_->Now();
    PS_RETURN_IF_ERROR(ReportEvaluation(*done));
  }
  if (!end_reason_.empty() || !eval_timer_.Due()) return OkStatus();
  // At idle priority on a host busy beyond training, the thread may get no
  // CPU at all: past a bound without an outcome, this thread evaluates
  // meanwhile, at its own priority, so that the evaluations (and the
  // target) still come.
  const bool starved = thread->busy() && clock_->Now() - eval_progress_ > StarvedAfter();
  if (thread->full() && !starved) return OkStatus();
  // Done before the pull: a pull that fails is tried again at the next
  // evaluation's time, not at every poll.
  eval_timer_.Done();
  PsFleet::State state;
  PsFleet::PsSteps steps;
  PS_RETURN_IF_ERROR(fleet_->PullState(&state, &steps));
  // The state's time is when it was pulled: what the evaluation says of it
  // held then, however long the evaluation and those before it take.
  const double secs = std::chrono::duration<double>(clock_->Now() - training_started_).count();
  if (!starved) {
    if (!thread->busy()) eval_progress_ = clock_->Now();
    thread->Start(steps[0], secs, std::move(state));
    return OkStatus();
  }
  LOG_FIRST_N(WARNING, 1) << "the evaluation thread got no CPU for "
                          << std::chrono::duration<double>(StarvedAfter()).count()
                          << " s (something beside training takes the CPUs): evaluating on the "
                             "monitor thread meanwhile";
  thread->Abandon();
  EvaluationThread::Outcome done{steps[0], secs, final_evaluation_.Evaluate(state)};
  return ReportEvaluation(done);
}

Clock::Duration Supervisor::StarvedAfter() const {
  return std::chrono::duration_cast<Clock::Duration>(
      std::chrono::duration<double>(std::max(3 * options_.eval_secs, 30.0)));
}

Status Supervisor::ReportEvaluation(const EvaluationThread::Outcome& done) {
  PS_RETURN_IF_ERROR(done.result.status());
  const EvalResult& eval = *done.result;
  char line[160];
  std::snprintf(line, sizeof(line), "eval: step %lld, test accuracy %.4f (%lld examples)",
                static_cast<long long>(done.step), eval.accuracy(),
                static_cast<long long>(eval.examples));
  char after[48];
  std::snprintf(after, sizeof(after), " after %.1f s of training", done.training_secs);
  // A model of columns' other metrics come between the two.
  LOG(INFO) << line << eval.MetricsSuffix() << after;
  if (summaries_ != nullptr) PS_RETURN_IF_ERROR(SummarizeEval(done.step, eval));
  const std::string& metric = options_.target_metric;
  double value = eval.accuracy();
  if (metric != "accuracy") {
    if (!eval.metrics) return InvalidArgument("the evaluation reports no " + metric);
    PS_ASSIGN_OR_RETURN(value, MetricNamed(*eval.metrics, metric));
  }
  const bool reached =
      LowerIsBetter(metric) ? value <= options_.target_accuracy : value >= options_.target_accuracy;
  if (options_.target_accuracy > 0 && reached) {
    std::snprintf(line, sizeof(line), "test %s %.4f reached the target %.4f at step %lld",
                  metric.c_str(), value, options_.target_accuracy,
                  static_cast<long long>(done.step));
    end_reason_ = line;
    LOG(INFO) << end_reason_ << " after " << done.training_secs
              << " s of training: ending training";
  }
  return OkStatus();
}

Status Supervisor::SaveOnStop() {
  if (!model_ready_) {
    LOG(INFO) << "stopping (" << stop_->reason() << ") before the model was ready: nothing to save";
    return OkStatus();
  }
  LOG(INFO) << "stopping (" << stop_->reason() << "): saving a checkpoint first";
  return SaveCheckpoint("graceful stop");
}

}  // namespace pstrain
