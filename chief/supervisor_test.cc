// Supervisor against an in-process ps (ps/testing/in_process_ps.h): initializing from
// the seed, restoring a checkpoint into an empty ps, and ending the job when
// the workers are done, with a real model, real checkpoint files and the
// real ps logic; no network. Whole clusters of processes: tests/integration/.
#include "chief/supervisor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <random>
#include <thread>

#include "chief/checkpoint.h"
#include "chief/http/metrics.h"
#include "core/test_util.h"
#include "core/testing/fake_clock.h"
#include "core/testing/faulty_file_ops.h"
#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "nn/model_spec.h"
#include "nn/test_models.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/testing/in_process_ps.h"

namespace pstrain {
namespace {

class SupervisorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = nn::ParseModelSpec(nn::TinyLinearNetText(0.5f), "the tiny net");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    auto model = nn::CreateModel(*spec);
    PS_ASSERT_OK(model);
    model_ = std::move(model).value();
    for (const nn::VariableSpec& v : model_->variables()) infos_.push_back({v.name, v.shape, 0});
    auto placement =
        cluster::ComputePlacement(infos_, 1, cluster::PlacementStrategy::kGreedy, 1 << 20);
    PS_ASSERT_OK(placement);
    placement_ = *placement;

    std::mt19937 rng(2);
    test_set_.count = 64;
    test_set_.rows = test_set_.cols = 4;
    test_set_.pixels.resize(64 * 16);
    for (uint8_t& p : test_set_.pixels) p = static_cast<uint8_t>(rng() % 256);
    for (int i = 0; i < 64; ++i) test_set_.labels.push_back(static_cast<int32_t>(rng() % 10));
  }

  // A fleet over a fresh, empty in-process ps; *ps gets that ps.
  std::unique_ptr<PsFleet> NewFleet(InProcessPs** ps) {
    std::vector<std::unique_ptr<PsConnection>> connections;
    auto one = std::make_unique<InProcessPs>(0);
    *ps = one.get();
    connections.push_back(std::move(one));
    return std::make_unique<PsFleet>(std::move(connections), infos_, placement_);
  }

  SupervisorOptions Options() const {
    SupervisorOptions o;
    o.train_dir = dir_.path();
    o.seed = 7;
    o.num_workers = 1;
    o.init.set_num_workers(1);
    o.init.mutable_optimizer()->set_name("GradientDescent");
    o.init.mutable_optimizer()->set_learning_rate(0.5f);
    o.startup_timeout = std::chrono::seconds(5);
    o.poll_interval = std::chrono::milliseconds(10);
    o.save_summaries_steps = 0;
    return o;
  }

  std::vector<Tensor> Pull(PsFleet* fleet, int64_t* step) {
    std::vector<Tensor> values;
    PsFleet::PsSteps steps;
    PS_EXPECT_OK(fleet->PullVariables(&values, &steps));
    *step = steps.empty() ? -1 : steps[0];
    return values;
  }

  test_util::TempDir dir_;
  std::unique_ptr<nn::Model> model_;
  std::vector<cluster::VariableInfo> infos_;
  cluster::Placement placement_;
  data::ImageDataset test_set_;
  StopNotice stop_;
};

TEST_F(SupervisorTest, StartInitializesEveryVariableFromTheSeed) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
  PS_ASSERT_OK(sup.Start());
  int64_t step = 0;
  std::vector<Tensor> values = Pull(fleet.get(), &step);
  EXPECT_EQ(step, 0);
  ASSERT_EQ(values.size(), model_->variables().size());
  for (size_t v = 0; v < values.size(); ++v) {
    const Tensor want = nn::InitialValue(model_->variables()[v], 7);
    for (int64_t i = 0; i < want.size(); ++i) ASSERT_EQ(values[v][i], want[i]) << v << " " << i;
  }
  EXPECT_EQ(sup.restores(), 0);
}

TEST_F(SupervisorTest, AnEmptyPsIsRestoredFromTheLatestCheckpoint) {
  std::vector<Tensor> trained;
  {
    InProcessPs* ps = nullptr;
    auto fleet = NewFleet(&ps);
    Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
    PS_ASSERT_OK(sup.Start());
    std::vector<Tensor> grads;
    for (const nn::VariableSpec& v : model_->variables()) {
      grads.emplace_back(v.shape);
      grads.back().Fill(1.0f);
    }
    PS_ASSERT_OK(fleet->PushGradients(grads, 0, 1, {0}, /*sync=*/false));
    stop_.Notify("test");
    PS_ASSERT_OK(sup.SaveOnStop());
    int64_t step = 0;
    trained = Pull(fleet.get(), &step);
    ASSERT_EQ(step, 1);
  }
  // A new chief with a new, empty ps (both restarted) carries on from there.
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  StopNotice stop;
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop, Options());
  PS_ASSERT_OK(sup.Start());
  int64_t step = 0;
  std::vector<Tensor> values = Pull(fleet.get(), &step);
  EXPECT_EQ(step, 1);
  for (size_t v = 0; v < values.size(); ++v) {
    for (int64_t i = 0; i < values[v].size(); ++i) ASSERT_EQ(values[v][i], trained[v][i]);
  }
  // The biases started at 0.5 and took one step of 0.5 x 1.
  EXPECT_EQ(values[1][0], 0.0f);
}

// A fleet of `num_ps` fresh, empty in-process ps tasks holding the tiny net
// and an embedding table "emb" (dim 3, rows starting at zero).
std::unique_ptr<PsFleet> FleetWithTable(const std::vector<cluster::VariableInfo>& infos,
                                        int num_ps) {
  std::vector<std::unique_ptr<PsConnection>> connections;
  for (int i = 0; i < num_ps; ++i) connections.push_back(std::make_unique<InProcessPs>(i));
  auto placement =
      cluster::ComputePlacement(infos, num_ps, cluster::PlacementStrategy::kGreedy, 1 << 20);
  PS_EXPECT_OK(placement);
  proto::EmbeddingTableConfig table;
  table.set_name("emb");
  table.set_dim(3);
  table.set_initializer_stddev(0);
  return std::make_unique<PsFleet>(std::move(connections),
                                   PsFleet::Layout{infos, *placement, {}, {table}});
}

// A cluster that comes back empty (every ps and the chief restarted, here
// with another number of ps tasks) gets its embedding rows back from the
// checkpoint with its variables, each key on the ps that holds it now.
TEST_F(SupervisorTest, EmbeddingRowsComeBackWithTheVariables) {
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 500; ++k) keys.push_back(k * 7919 - 1000);
  auto step_of = [&](PsFleet* fleet) {
    std::vector<PsFleet::TableStep> step(1);
    step[0].table = "emb";
    step[0].dim = 3;
    step[0].ids = Unique(keys.data(), static_cast<int64_t>(keys.size()));
    PS_EXPECT_OK(fleet->Shard(&step));
    return step;
  };
  {
    auto fleet = FleetWithTable(infos_, 2);
    Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
    PS_ASSERT_OK(sup.Start());
    std::vector<Tensor> grads;
    for (const nn::VariableSpec& v : model_->variables()) grads.emplace_back(v.shape);
    std::vector<PsFleet::TableStep> step = step_of(fleet.get());
    Tensor rows({500, 3});
    for (int64_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
    PS_ASSERT_OK(fleet->PushGradientsAndRows(grads, step, {rows}, 0, 1, {0, 0}, false));
    stop_.Notify("test");
    PS_ASSERT_OK(sup.SaveOnStop());
  }
  auto fleet = FleetWithTable(infos_, 3);
  StopNotice stop;
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop, Options());
  PS_ASSERT_OK(sup.Start());
  std::vector<PsFleet::TableStep> step = step_of(fleet.get());
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet->PullVariablesAndRows(&values, &step, &steps));
  EXPECT_EQ(steps[0], 1);
  // SGD at 0.5 from zeros: each row is -0.5 x its gradient.
  for (int64_t i = 0; i < step[0].rows.size(); ++i) {
    ASSERT_EQ(step[0].rows[i], -0.5f * static_cast<float>(i)) << i;
  }
}

TEST_F(SupervisorTest, MonitorEndsWhenTheWorkerIsDoneAndFinishSavesAndShutsTheJobDown) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, Options());
  PS_ASSERT_OK(sup.Start());
  PS_ASSERT_OK(ps->Heartbeat(0, 1, 2.3f));
  PS_ASSERT_OK(ps->WorkerDone(0, ""));
  PS_ASSERT_OK(sup.Monitor());
  PS_ASSERT_OK(sup.Finish());
  auto state = ReadCheckpointState(dir_.path());
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  auto ckpt = ReadCheckpoint(dir_.path() + "/model.ckpt-0");
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->tensors.count("logits/weights"), 1u);
  EXPECT_EQ(ps->shutdown_reason(), "training done");
}

// Ps 0 as a restart looks to the chief: on the `fail_at`-th status request
// it is unreachable, and from then on it is a new, empty ps (a new
// incarnation). Every status request first records the global_step the
// chief's metrics board shows then, and the `stop_at`-th stops the chief.
class RestartingPs : public PsConnection {
 public:
  RestartingPs(const MetricsBoard* board, StopNotice* stop, int fail_at, int stop_at)
      : ps_(std::make_unique<InProcessPs>(0)),
        board_(board),
        stop_(stop),
        fail_at_(fail_at),
        stop_at_(stop_at) {}

  InProcessPs* ps() { return ps_.get(); }
  const std::vector<int64_t>& published_steps() const { return published_steps_; }

  StatusOr<proto::StatusResponse> GetStatus(std::chrono::milliseconds timeout) override {
    published_steps_.push_back(board_->Read().global_step);
    if (++requests_ == stop_at_) stop_->Notify("test");
    if (requests_ == fail_at_) {
      ps_ = std::make_unique<InProcessPs>(0);
      return Unavailable("ps:0 is restarting");
    }
    return ps_->GetStatus(timeout);
  }
  const std::string& name() const override { return ps_->name(); }
  Status Init(const proto::InitHeader& header, const NamedTensors& values) override {
    return ps_->Init(header, values);
  }
  Status PullWithRows(uint64_t fingerprint, const std::vector<std::string>& names,
                      const std::vector<proto::TableKeys>& lookups,
                      std::map<std::string, Tensor>* out, int64_t* step, int64_t min_step,
                      std::chrono::milliseconds wait) override {
    return ps_->PullWithRows(fingerprint, names, lookups, out, step, min_step, wait);
  }
  Status PullState(uint64_t fingerprint, std::map<std::string, Tensor>* out,
                   int64_t* step) override {
    return ps_->PullState(fingerprint, out, step);
  }
  StatusOr<proto::PushResponse> Push(const proto::PushHeader& header,
                                     const NamedTensors& grads) override {
    return ps_->Push(header, grads);
  }
  Status ExportRows(
      uint64_t fingerprint, const std::string& table, bool delta, bool start_deltas,
      const std::function<Status(const proto::ExportRowsResponse&)>& on_block) override {
    return ps_->ExportRows(fingerprint, table, delta, start_deltas, on_block);
  }
  StatusOr<proto::ImportRowsResponse> ImportRows(
      uint64_t fingerprint, const std::function<bool(proto::RowBlock*)>& next) override {
    return ps_->ImportRows(fingerprint, next);
  }
  Status FinishRestore(uint64_t fingerprint) override { return ps_->FinishRestore(fingerprint); }
  StatusOr<proto::HeartbeatResponse> Heartbeat(int worker, int64_t local_step,
                                               float loss) override {
    return ps_->Heartbeat(worker, local_step, loss);
  }
  Status WorkerDone(int worker, const std::string& failure) override {
    return ps_->WorkerDone(worker, failure);
  }
  Status SetLiveWorkers(const std::vector<int>& workers) override {
    return ps_->SetLiveWorkers(workers);
  }
  Status EndTraining(const std::string& reason) override { return ps_->EndTraining(reason); }
  Status Shutdown(const std::string& reason) override { return ps_->Shutdown(reason); }

 private:
  std::unique_ptr<InProcessPs> ps_;
  const MetricsBoard* const board_;
  StopNotice* const stop_;
  const int fail_at_, stop_at_;
  int requests_ = 0;
  std::vector<int64_t> published_steps_;
};

// A ps that is unreachable when the chief checks the incarnations and back,
// empty, when it asks for the coordinator's status in the same poll: the
// metrics never show the empty ps's step 0; the next poll restores it.
TEST_F(SupervisorTest, AnEmptyPsBackWithinOnePollIsNeverPublished) {
  MetricsBoard board;
  // Requests: Start's wait (1) and check (2); the first poll's incarnation
  // check (3) and coordinator status (4, publishes step 3, saves); the
  // second poll's check (5) finds ps 0 gone and its status (6) empty.
  auto owned = std::make_unique<RestartingPs>(&board, &stop_, /*fail_at=*/5, /*stop_at=*/20);
  RestartingPs* ps = owned.get();
  std::vector<std::unique_ptr<PsConnection>> connections;
  connections.push_back(std::move(owned));
  PsFleet fleet(std::move(connections), infos_, placement_);
  SupervisorOptions options = Options();
  options.board = &board;
  options.save_checkpoint_steps = 1;
  Supervisor sup(model_.get(), &fleet, &test_set_, nullptr, &stop_, options);
  PS_ASSERT_OK(sup.Start());
  std::vector<Tensor> grads;
  for (const nn::VariableSpec& v : model_->variables()) {
    grads.emplace_back(v.shape);
    grads.back().Fill(1.0f);
  }
  for (int step = 0; step < 3; ++step) {
    PS_ASSERT_OK(fleet.PushGradients(grads, 0, step + 1, {step}, /*sync=*/false));
  }
  PS_ASSERT_OK(ps->ps()->Heartbeat(0, 3, 2.3f));
  const Status monitored = sup.Monitor();
  EXPECT_EQ(monitored.code(), Code::kAborted) << monitored.ToString();
  EXPECT_EQ(sup.restores(), 1);
  const std::vector<int64_t>& seen = ps->published_steps();
  ASSERT_GE(seen.size(), 20u);
  const auto first_published = std::find(seen.begin(), seen.end(), 3);
  ASSERT_NE(first_published, seen.end());
  for (auto it = first_published; it != seen.end(); ++it) {
    EXPECT_EQ(*it, 3) << "request " << (it - seen.begin() + 1) << " saw global_step " << *it;
  }
}

// A thousand workers: the status page and pstrain_task_up list the chief,
// the ps and at most kListedWorkers workers, those not running first; the
// rest are counted, and every worker is counted by state.
TEST_F(SupervisorTest, AThousandWorkersPublishABoundedTaskList) {
  constexpr int kWorkers = 1000;
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  MetricsBoard board;
  SupervisorOptions options = Options();
  options.board = &board;
  options.num_workers = kWorkers;
  options.init.set_num_workers(kWorkers);
  options.init.set_heartbeat_timeout_secs(600);
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, options);
  PS_ASSERT_OK(sup.Start());
  for (int w = 0; w < kWorkers - 2; ++w) ASSERT_TRUE(ps->Heartbeat(w, 1, 0.5f).ok());
  PS_ASSERT_OK(ps->Heartbeat(kWorkers - 2, 1, 0.5f));
  PS_ASSERT_OK(ps->WorkerDone(kWorkers - 2, ""));  // and worker 999 never heard from
  std::thread stopper([&] {
    WaitUntil([&] { return !board.Read().workers_by_state.empty(); }, std::chrono::seconds(30));
    stop_.Notify("test over");
  });
  const Status monitored = sup.Monitor();
  stopper.join();
  EXPECT_EQ(monitored.code(), Code::kAborted) << monitored.ToString();
  const ChiefMetrics m = board.Read();
  EXPECT_EQ(m.workers_by_state.at("running"), kWorkers - 2);
  EXPECT_EQ(m.workers_by_state.at("done"), 1);
  EXPECT_EQ(m.workers_by_state.at("unreachable"), 1);
  int listed = 0;
  bool done_listed = false, unreachable_listed = false;
  for (const TaskHealth& t : m.tasks) {
    if (t.task.rfind("worker:", 0) != 0) continue;
    ++listed;
    done_listed |= t.task == "worker:998" && t.state == "done";
    unreachable_listed |= t.task == "worker:999" && t.state == "unreachable";
  }
  EXPECT_EQ(listed, Supervisor::kListedWorkers);
  EXPECT_TRUE(done_listed);
  EXPECT_TRUE(unreachable_listed);
  EXPECT_EQ(m.unlisted_workers_up, kWorkers - Supervisor::kListedWorkers);
  EXPECT_EQ(m.unlisted_workers_down, 0);
  const std::string text = RenderPrometheus(m);
  EXPECT_NE(text.find("pstrain_workers{state=\"running\"} 998\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("worker:500\""), std::string::npos);
}

// On a clock the test moves: no evaluation before eval_secs has passed, and
// the first one, reaching the target, ends training.
TEST_F(SupervisorTest, AnEvaluationThatReachesTheTargetEndsTraining) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  FakeClock clock;
  SupervisorOptions options = Options();
  options.clock = &clock;
  options.poll_interval = std::chrono::seconds(1);
  options.eval_secs = 60;
  options.target_accuracy = 1e-9;  // any correct answer on the test set reaches it
  // The evaluation thread's own model (of an image model: no fleet).
  auto eval_model =
      nn::CreateModel(*nn::ParseModelSpec(nn::TinyLinearNetText(0.5f), "the tiny net"));
  PS_ASSERT_OK(eval_model);
  EvaluationThread thread(
      StateEvaluation{eval_model->get(), nullptr, &test_set_, nullptr, {}, false},
      /*compute_threads=*/1, /*idle=*/false);
  options.evaluation_thread = &thread;
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, options);
  PS_ASSERT_OK(sup.Start());
  PS_ASSERT_OK(ps->Heartbeat(0, 1, 2.3f));
  Status monitored = Aborted("Monitor did not return");
  std::thread monitor([&] { monitored = sup.Monitor(); });
  // A poll at 59 s: no evaluation yet.
  ASSERT_TRUE(clock.AwaitSleepers(1));
  clock.Advance(std::chrono::seconds(59));
  ASSERT_TRUE(clock.AwaitSleepers(1));
  auto beat = ps->Heartbeat(0, 1, 2.3f);
  PS_ASSERT_OK(beat);
  EXPECT_EQ(beat->training_ended(), "");
  // The poll at 60 s starts an evaluation on the thread; a later poll
  // finds it done, reaching the target, and tells the workers.
  clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(clock.AwaitSleepers(1));
  EXPECT_TRUE(thread.busy());
  ASSERT_TRUE(WaitUntil([&] {
    clock.Advance(std::chrono::seconds(1));
    beat = clock.AwaitSleepers(1) ? ps->Heartbeat(0, 1, 2.3f) : Unavailable("no poll");
    return !beat.ok() || !beat->training_ended().empty();
  }));
  PS_ASSERT_OK(beat);
  EXPECT_NE(beat->training_ended().find("reached the target"), std::string::npos)
      << beat->training_ended();
  // The worker's part: report done; the next poll ends Monitor.
  PS_ASSERT_OK(ps->WorkerDone(0, ""));
  clock.Advance(std::chrono::seconds(1));
  monitor.join();
  EXPECT_TRUE(monitored.ok()) << monitored.ToString();
  PS_ASSERT_OK(sup.Finish());
}

// A save that fails (a full disk, then a failing fsync) leaves the last
// checkpoint whole and readable and no temporary file; training goes on,
// and the next save once the disk is healed succeeds.
TEST_F(SupervisorTest, AFullDiskOrAFailingFsyncLosesNoCheckpointAndTrainingGoesOn) {
  InProcessPs* ps = nullptr;
  auto fleet = NewFleet(&ps);
  testing::FaultyFileOps disk;
  SupervisorOptions options = Options();
  options.files = &disk;
  options.save_checkpoint_steps = 1;
  options.checkpoint_format = CheckpointFormat::kTensorFlow;
  Supervisor sup(model_.get(), fleet.get(), &test_set_, nullptr, &stop_, options);
  PS_ASSERT_OK(sup.Start());
  std::vector<Tensor> grads;
  for (const nn::VariableSpec& v : model_->variables()) {
    grads.emplace_back(v.shape);
    grads.back().Fill(0.1f);
  }
  int64_t step = 0;
  auto push = [&] {
    auto pushed = fleet->PushGradients(grads, 0, step + 1, {step}, /*sync=*/false);
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
    step = pushed->global_step();
    PS_ASSERT_OK(ps->Heartbeat(0, step, 1.0f));
  };
  auto latest = [&]() -> std::string {
    auto state = ReadCheckpointState(dir_.path());
    return state.ok() ? state->latest : "";
  };
  auto saved = [&](int64_t at) {
    return WaitUntil([&] { return latest() == CheckpointName(at); }, std::chrono::seconds(20));
  };
  Status monitored = Aborted("Monitor did not return");
  std::thread monitor([&] { monitored = sup.Monitor(); });
  ASSERT_NO_FATAL_FAILURE(push());
  ASSERT_TRUE(saved(1)) << "latest: " << latest();
  for (const int error : {ENOSPC, EIO}) {
    SCOPED_TRACE(error == ENOSPC ? "a full disk" : "a failing fsync");
    const int64_t good = step;
    if (error == ENOSPC) {
      disk.FailWrites(error);
    } else {
      disk.FailFsyncs(error);
    }
    const int before = disk.failures();
    ASSERT_NO_FATAL_FAILURE(push());
    // Tried, failed, and tried again at the next poll.
    ASSERT_TRUE(WaitUntil([&] { return disk.failures() >= before + 2; }, std::chrono::seconds(20)));
    ASSERT_NO_FATAL_FAILURE(push());  // training goes on
    EXPECT_EQ(latest(), CheckpointName(good));
    auto kept = ReadCheckpoint(dir_.path() + "/" + CheckpointName(good));
    ASSERT_TRUE(kept.ok()) << "the last checkpoint was damaged: " << kept.status().ToString();
    EXPECT_EQ(kept->global_step, good);
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path())) {
      EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
          << "a temporary file was left behind: " << entry.path();
    }
    disk.Heal();
    ASSERT_TRUE(saved(step)) << "latest: " << latest();
  }
  PS_ASSERT_OK(ps->WorkerDone(0, ""));
  monitor.join();
  EXPECT_TRUE(monitored.ok()) << monitored.ToString();
  PS_ASSERT_OK(sup.Finish());
}

}  // namespace
}  // namespace pstrain
