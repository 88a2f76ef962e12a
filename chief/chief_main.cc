// chief: the supervisor. Initializes every variable on the ps tasks, marks
// the model ready, waits for the workers, evaluates the final variables on
// the test set, writes them into the train dir and shuts the ps tasks down.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "chief/checkpoint.h"
#include "chief/evaluation.h"
#include "cluster/cluster_flags.h"
#include "core/stop_signals.h"
#include "data/data_flags.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"
#include "ps/optimizer_flags.h"
#include "ps/rpc/ps_fleet.h"

DEFINE_string(model, "mnist", "Built-in model being trained");
DEFINE_uint64(seed, 0, "Seed of the variables' initial values");
DEFINE_string(train_dir, "runs/pstrain", "Where the chief writes checkpoints");
DEFINE_int32(startup_timeout_secs, 600, "Give up waiting for the ps tasks after this");
DEFINE_int32(progress_secs, 15, "Log global_step and finished workers this often");

namespace {

constexpr int kExitBadInput = 1;
constexpr int kExitRetryable = 3;

int Fail(const pstrain::Status& s, int code) {
  LOG(ERROR) << s.ToString();
  return code;
}

// Polls ps 0 until every worker has reported done, or a stop is requested.
pstrain::Status WaitForWorkers(pstrain::PsFleet* fleet, int num_workers,
                               pstrain::StopNotice* stop) {
  using Clock = std::chrono::steady_clock;
  auto last_log = Clock::now();
  auto last_contact = Clock::now();
  for (;;) {
    auto st = fleet->CoordinatorStatus();
    if (st.ok()) {
      last_contact = Clock::now();
      if (st->done_workers_size() >= num_workers) return pstrain::OkStatus();
      if (Clock::now() - last_log >= std::chrono::seconds(FLAGS_progress_secs)) {
        LOG(INFO) << "global_step " << st->global_step() << ", workers done "
                  << st->done_workers_size() << "/" << num_workers;
        last_log = Clock::now();
      }
    } else if (Clock::now() - last_contact > std::chrono::seconds(60)) {
      return st.status().Annotate("lost the ps holding global_step");
    }
    if (stop->WaitFor(std::chrono::milliseconds(500))) {
      return pstrain::Aborted("stopped: " + stop->reason());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::StopNotice stop;
  pstrain::HandleStopSignals(&stop);
  gflags::SetUsageMessage(
      "the pstrain chief (supervisor).\n"
      "  chief --job=chief --task=0 --cluster_spec=cluster.json --train_dir=runs/x\n"
      "or, with no cluster flags, from TF_CONFIG as Kubeflow's TFJob sets it.");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);

  const auto config = pstrain::cluster::ClusterConfigFromFlagsOrDie("chief");
  auto model = pstrain::nn::CreateModel(FLAGS_model);
  if (!model.ok()) return Fail(model.status(), kExitBadInput);
  auto optimizer = pstrain::OptimizerConfigFromFlags();
  if (!optimizer.ok()) return Fail(optimizer.status(), kExitBadInput);
  std::vector<std::pair<std::string, pstrain::Shape>> variables;
  for (const auto& v : (*model)->variables()) variables.emplace_back(v.name, v.shape);
  auto fleet = pstrain::PsFleet::CreateFromFlags(config.spec, variables,
                                                 *pstrain::OptimizerSlotCount(*optimizer));
  if (!fleet.ok()) return Fail(fleet.status(), kExitBadInput);
  auto test = pstrain::data::LoadMnistSplit(FLAGS_data_dir, "t10k");
  if (!test.ok()) return Fail(test.status(), kExitBadInput);
  std::error_code ec;
  std::filesystem::create_directories(FLAGS_train_dir, ec);
  if (ec) {
    return Fail(pstrain::IoError("cannot create --train_dir " + FLAGS_train_dir + ": " +
                                 ec.message()),
                kExitBadInput);
  }

  pstrain::Status s = (*fleet)->WaitForPs(/*require_ready=*/false, &stop,
                                          std::chrono::seconds(FLAGS_startup_timeout_secs));
  if (!s.ok()) return Fail(s, kExitRetryable);
  std::vector<pstrain::Tensor> values;
  for (const auto& v : (*model)->variables()) {
    values.push_back(pstrain::nn::InitialValue(v, FLAGS_seed));
  }
  s = (*fleet)->InitVariables(values, *optimizer, /*global_step=*/0);
  if (!s.ok()) return Fail(s, kExitRetryable);
  const auto& placement = (*fleet)->placement();
  LOG(INFO) << "model ready: " << variables.size() << " variables in " << placement.shards.size()
            << " shards on " << placement.num_ps << " ps tasks (placement "
            << std::hex << placement.fingerprint << std::dec << ")";
  for (int ps = 0; ps < placement.num_ps; ++ps) {
    LOG(INFO) << "  ps:" << ps << " holds " << placement.ShardsOnPs(ps).size() << " shards, "
              << placement.bytes_per_ps[ps] << " bytes";
  }

  const int num_workers = config.spec.NumTasks("worker");
  s = WaitForWorkers(fleet->get(), num_workers, &stop);
  if (!s.ok()) return Fail(s, kExitRetryable);

  int64_t step = 0;
  s = (*fleet)->PullVariables(&values, &step);
  if (!s.ok()) return Fail(s, kExitRetryable);
  auto eval = pstrain::EvaluatePrecisionAt1(model->get(), values, *test);
  if (!eval.ok()) return Fail(eval.status(), kExitRetryable);
  char line[128];
  std::snprintf(line, sizeof(line), "final: step %lld, test accuracy %.4f (%lld examples)",
                static_cast<long long>(step), eval->accuracy(),
                static_cast<long long>(eval->examples));
  LOG(INFO) << line;

  std::vector<std::pair<std::string, const pstrain::Tensor*>> named;
  for (size_t i = 0; i < variables.size(); ++i) named.emplace_back(variables[i].first, &values[i]);
  auto prefix = pstrain::WriteCheckpoint(FLAGS_train_dir, step, named);
  if (!prefix.ok()) return Fail(prefix.status(), kExitRetryable);
  const std::string base = pstrain::CheckpointName(step);
  s = pstrain::WriteCheckpointState(FLAGS_train_dir, {base, {base}});
  if (!s.ok()) return Fail(s, kExitRetryable);
  LOG(INFO) << "wrote the final variables to " << *prefix;

  s = (*fleet)->ShutdownAll("training done");
  if (!s.ok()) LOG(WARNING) << "shutting the ps tasks down: " << s.ToString();
  return 0;
}
