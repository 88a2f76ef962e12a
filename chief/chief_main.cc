// chief: the supervisor. Initializes every variable on the ps tasks, marks
// the model ready, waits for the workers, evaluates the final variables on
// the test set, writes them into the train dir and shuts the ps tasks down.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <filesystem>

#include "chief/supervisor.h"
#include "cluster/cluster_flags.h"
#include "core/stop_signals.h"
#include "data/data_flags.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"
#include "ps/optimizer_flags.h"
#include "ps/rpc/ps_fleet.h"
#include "ps/sync_flags.h"

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
  const int num_workers = config.spec.NumTasks("worker");
  auto model = pstrain::nn::CreateModel(FLAGS_model);
  if (!model.ok()) return Fail(model.status(), kExitBadInput);
  pstrain::SupervisorOptions options;
  options.train_dir = FLAGS_train_dir;
  options.seed = FLAGS_seed;
  options.num_workers = num_workers;
  options.startup_timeout = std::chrono::seconds(FLAGS_startup_timeout_secs);
  options.progress_interval = std::chrono::seconds(FLAGS_progress_secs);
  options.step_timeout = std::chrono::duration<double>(FLAGS_step_timeout_secs);
  auto optimizer = pstrain::OptimizerConfigFromFlags();
  if (!optimizer.ok()) return Fail(optimizer.status(), kExitBadInput);
  *options.init.mutable_optimizer() = *optimizer;
  auto sync = pstrain::SyncConfigFromFlags(num_workers);
  if (!sync.ok()) return Fail(sync.status(), kExitBadInput);
  *options.init.mutable_sync() = *sync;
  options.init.set_heartbeat_timeout_secs(static_cast<float>(FLAGS_heartbeat_timeout_secs));

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

  pstrain::Supervisor supervisor(model->get(), fleet->get(), &*test, &stop, options);
  pstrain::Status s = supervisor.Start();
  if (s.ok()) s = supervisor.Monitor();
  if (s.ok()) s = supervisor.Finish();
  if (!s.ok()) return Fail(s, kExitRetryable);
  return 0;
}
