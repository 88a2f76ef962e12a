// chief: the supervisor. Initializes every variable on the ps tasks, marks
// the model ready, waits for the workers, evaluates the final variables on
// the test set, writes them into the train dir and shuts the ps tasks down.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <filesystem>

#include "chief/eval_metrics.h"
#include "chief/http/http_server.h"
#include "chief/supervisor.h"
#include "chief/tf_names.h"
#include "chief/warm_start.h"
#include "cluster/cluster_flags.h"
#include "cluster/cpu_share_flags.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "core/tls.h"
#include "data/data_flags.h"
#include "data/dataset_loader.h"
#include "data/feature_batches.h"
#include "data/mnist_dataset.h"
#include "nn/compute_threads.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "nn/wide_deep_model.h"
#include "ps/client/ps_fleet.h"
#include "ps/optimizer.h"
#include "ps/optimizer_flags.h"
#include "ps/rpc/ps_connections.h"
#include "ps/sync_flags.h"

DEFINE_string(model, "mnist",
              "Network being trained: a built-in one (mnist, mnist_bn, cifar10, mnist_ids, "
              "wide_deep, fasttext, movielens) or a ModelSpec "
              "text file (proto/model.proto)");
DEFINE_uint64(seed, 0, "Seed of the variables' initial values");
DEFINE_string(warm_start_from, "",
              "A TensorFlow checkpoint (its prefix: PREFIX.index, PREFIX.data-00000-of-00001) "
              "whose values the model's variables start from when --train_dir has no "
              "checkpoint; a variable it lacks, or holds with another shape or dtype, stops "
              "the chief");
DEFINE_string(warm_start_vars, ".*",
              "With --warm_start_from: a regex; only the variables whose whole names match it "
              "are warm-started, the others start from --seed");
DEFINE_bool(warm_start_slots, false,
            "With --warm_start_from: also the optimizer slots (under TensorFlow's names) and the "
            "moving averages (with --ema_decay) of the warm-started variables; one the "
            "checkpoint lacks stops the chief");
DEFINE_string(warm_start_map, "",
              "With --warm_start_from: tf_name=pstrain_name,... for variables the checkpoint "
              "holds under other names");
DEFINE_string(train_dir, "runs/pstrain", "Where the chief writes checkpoints");
DEFINE_int32(startup_timeout_secs, 600,
             "Give up waiting for the ps tasks after this; a worker never heard from this long "
             "after the model is ready ends the job, naming it");
DEFINE_int32(ps_lost_timeout_secs, 120,
             "While training, exit 138 (for a restart) once ps:0, which holds global_step, has "
             "not answered for this long");
DEFINE_int32(progress_secs, 15, "Log global_step and finished workers this often");
DEFINE_double(save_checkpoint_secs, 600, "Save a checkpoint this often (0: no timer)");
DEFINE_int64(save_checkpoint_steps, 0, "Also save a checkpoint every this many steps (0: off)");
DEFINE_int32(max_to_keep, 5, "Checkpoints kept; older ones are deleted");
DEFINE_string(checkpoint_format, "tensorflow",
              "tensorflow (TensorFlow's V2 checkpoints: model.ckpt-STEP.index and "
              ".data-00000-of-00001, slots under TF's names, which tf.train.load_checkpoint and "
              "tf.compat.v1.train.Saver read; pstrain's index of the tables beside them in "
              ".pstrain) or pstrain (its own: model.ckpt-STEP.index and .data); either is read "
              "back");
DEFINE_int32(delta_checkpoints, 0,
             "Models with embedding tables: after each full checkpoint, this many checkpoints "
             "save only the rows changed since it (0: every checkpoint is full)");
DEFINE_double(keep_checkpoint_every_n_hours, 10000,
              "Keep one checkpoint for good every this many hours");
DEFINE_int64(save_summaries_steps, 100,
             "Write TensorBoard summaries every this many steps (0: off)");
DEFINE_double(ema_decay, 0,
              "Keep ExponentialMovingAverage shadows of the variables with this decay (0: off; "
              "default: the model's recipe, cifar10: 0.9999)");
DEFINE_bool(eval_use_moving_averages, false,
            "Evaluate the moving averages, not the variables (default: the model's recipe)");
DEFINE_int32(batch_size, 128, "The workers' batch size (for examples/sec)");
DEFINE_double(
    eval_secs, 0,
    "Also evaluate on the test set every this many seconds while training, logging "
    "'eval: step S, test accuracy A (N examples)[, auc ...] after T s of training' (0: at the "
    "end only)");
DEFINE_double(target_accuracy, 0,
              "End training once an evaluation while training reaches this test accuracy: the "
              "workers stop after their step, and the chief saves and reports as at the end "
              "(0: off; needs --eval_secs), or the metric --target_metric names");
DEFINE_string(target_metric, "accuracy",
              "What --target_accuracy is the target of: accuracy, or, for a model of rows (CSV "
              "or text), auc, precision, recall, macro_f1 or log_loss (reached at or below)");
DEFINE_int32(http_port, 0,
             "Serve /healthz, /metrics, /status and a status page on this port (0: a free "
             "port, -1: off)");
DEFINE_string(http_host, "0.0.0.0", "Interface for the HTTP endpoint");

int main(int argc, char** argv) {
  pstrain::StopNotice stop;
  pstrain::HandleStopSignals(&stop);
  pstrain::InitTaskMain(
      "the pstrain chief (supervisor).\n"
      "  chief --job=chief --task=0 --cluster_spec=cluster.json --train_dir=runs/x\n"
      "or, with no cluster flags, from TF_CONFIG as Kubeflow's TFJob sets it.",
      &argc, &argv);

  const auto config = pstrain::cluster::ClusterConfigFromFlagsOrDie("chief");
  pstrain::nn::SetComputeThreads(pstrain::cluster::ComputeThreadsFromFlagsOrDie(config));
  const int num_workers = config.spec.NumTasks("worker");
  auto spec = pstrain::nn::LoadModelSpec(FLAGS_model);
  if (!spec.ok()) return pstrain::ExitWith(spec.status(), pstrain::kExitBadInput);
  const pstrain::Status data_flags = pstrain::data::ApplyDataFlags(&*spec);
  if (!data_flags.ok()) return pstrain::ExitWith(data_flags, pstrain::kExitBadInput);
  auto model = pstrain::nn::CreateModel(*spec);
  if (!model.ok()) return pstrain::ExitWith(model.status(), pstrain::kExitBadInput);
  const pstrain::proto::TrainingRecipe& recipe = spec->recipe();
  const auto given = [](const char* flag) {
    return !gflags::GetCommandLineFlagInfoOrDie(flag).is_default;
  };
  pstrain::SupervisorOptions options;
  options.train_dir = FLAGS_train_dir;
  options.seed = FLAGS_seed;
  options.num_workers = num_workers;
  options.init.set_num_workers(num_workers);
  options.startup_timeout = std::chrono::seconds(FLAGS_startup_timeout_secs);
  options.ps_lost_timeout = std::chrono::seconds(FLAGS_ps_lost_timeout_secs);
  options.progress_interval = std::chrono::seconds(FLAGS_progress_secs);
  options.step_timeout = std::chrono::duration<double>(FLAGS_step_timeout_secs);
  options.save_checkpoint_secs = FLAGS_save_checkpoint_secs;
  options.save_checkpoint_steps = FLAGS_save_checkpoint_steps;
  options.max_to_keep = FLAGS_max_to_keep;
  if (FLAGS_checkpoint_format != "pstrain" && FLAGS_checkpoint_format != "tensorflow") {
    return pstrain::ExitWith(
        pstrain::InvalidArgument("--checkpoint_format must be pstrain or tensorflow, not " +
                                 FLAGS_checkpoint_format),
        pstrain::kExitBadInput);
  }
  options.checkpoint_format = FLAGS_checkpoint_format == "tensorflow"
                                  ? pstrain::CheckpointFormat::kTensorFlow
                                  : pstrain::CheckpointFormat::kPstrain;
  options.delta_checkpoints = FLAGS_delta_checkpoints;
  options.keep_checkpoint_every_n_hours = FLAGS_keep_checkpoint_every_n_hours;
  options.save_summaries_steps = FLAGS_save_summaries_steps;
  options.eval_use_moving_averages = given("eval_use_moving_averages")
                                         ? FLAGS_eval_use_moving_averages
                                         : recipe.eval_use_moving_averages();
  options.batch_size = FLAGS_batch_size;
  if (FLAGS_target_metric != "accuracy") {
    pstrain::Status known =
        pstrain::MetricNamed(pstrain::EvalMetrics(), FLAGS_target_metric).status();
    if (known.ok() && !pstrain::data::ReadsRows(*spec)) {
      known = pstrain::InvalidArgument("--target_metric=" + FLAGS_target_metric + ": model " +
                                       FLAGS_model + " reports its test accuracy only");
    }
    if (!known.ok()) return pstrain::ExitWith(known, pstrain::kExitBadInput);
  }
  options.target_metric = FLAGS_target_metric;
  const bool unbounded = pstrain::LowerIsBetter(FLAGS_target_metric);  // a log loss
  if (FLAGS_eval_secs < 0 || FLAGS_target_accuracy < 0 ||
      (FLAGS_target_accuracy > 1 && !unbounded) ||
      (FLAGS_target_accuracy > 0 && FLAGS_eval_secs == 0)) {
    return pstrain::ExitWith(
        pstrain::InvalidArgument("--eval_secs must be >= 0 and --target_accuracy in [0, 1], "
                                 "with --eval_secs > 0 when it is set"),
        pstrain::kExitBadInput);
  }
  options.eval_secs = FLAGS_eval_secs;
  options.target_accuracy = FLAGS_target_accuracy;
  const double ema_decay = given("ema_decay") ? FLAGS_ema_decay : recipe.ema_decay();
  if (FLAGS_delta_checkpoints < 0) {
    return pstrain::ExitWith(pstrain::InvalidArgument("--delta_checkpoints must be >= 0"),
                             pstrain::kExitBadInput);
  }
  if (ema_decay < 0 || ema_decay >= 1) {
    return pstrain::ExitWith(pstrain::InvalidArgument("--ema_decay must be in [0, 1)"),
                             pstrain::kExitBadInput);
  }
  options.init.set_ema_decay(static_cast<float>(ema_decay));
  auto sync = pstrain::SyncConfigFromFlags(num_workers);
  if (!sync.ok()) return pstrain::ExitWith(sync.status(), pstrain::kExitBadInput);
  *options.init.mutable_sync() = *sync;
  auto optimizer = pstrain::OptimizerConfigFromFlags(recipe, sync->enabled());
  if (!optimizer.ok()) return pstrain::ExitWith(optimizer.status(), pstrain::kExitBadInput);
  *options.init.mutable_optimizer() = *optimizer;
  std::map<std::string, pstrain::Tensor> warm_start;
  if (!FLAGS_warm_start_from.empty()) {
    pstrain::WarmStartOptions warm;
    warm.prefix = FLAGS_warm_start_from;
    warm.vars = FLAGS_warm_start_vars;
    warm.map = FLAGS_warm_start_map;
    warm.slots = FLAGS_warm_start_slots;
    auto created = pstrain::Optimizer::Create(*optimizer);
    if (warm.slots && created.ok()) warm.slot_names = (*created)->slot_names();
    warm.tf_name = pstrain::TfCheckpointNames((*model)->variables(), *optimizer);
    warm.moving_average = ema_decay > 0;
    auto values = pstrain::WarmStartValues((*model)->variables(), warm);
    if (!values.ok()) return pstrain::ExitWith(values.status(), pstrain::kExitBadInput);
    warm_start = std::move(*values);
    options.warm_start = &warm_start;
    options.warm_start_from = FLAGS_warm_start_from;
  } else if (given("warm_start_vars") || given("warm_start_map") || given("warm_start_slots")) {
    return pstrain::ExitWith(
        pstrain::InvalidArgument(
            "--warm_start_vars, --warm_start_map and --warm_start_slots need --warm_start_from"),
        pstrain::kExitBadInput);
  }
  options.init.set_heartbeat_timeout_secs(static_cast<float>(FLAGS_heartbeat_timeout_secs));

  auto layout = pstrain::PsFleet::LayoutFromFlags(config.spec.NumTasks("ps"), (*model)->variables(),
                                                  *pstrain::OptimizerSlotCount(*optimizer));
  if (!layout.ok()) return pstrain::ExitWith(layout.status(), pstrain::kExitBadInput);
  for (const pstrain::nn::EmbeddingLookup& lookup : (*model)->lookups()) {
    layout->tables.push_back(lookup.table);  // spread over every ps by key
  }
  pstrain::PsFleet fleet(pstrain::ConnectToPs(config.spec, pstrain::PsClientOptions()).connections,
                         std::move(*layout));
  // A model of columns evaluates on its CSV input's test rows; any other on
  // the test images (and summarizes training images).
  const bool columns = pstrain::data::ReadsRows(*spec);
  pstrain::StatusOr<pstrain::data::FeaturizedRows> test_rows = pstrain::data::FeaturizedRows();
  pstrain::StatusOr<pstrain::data::ImageDataset> test = pstrain::data::ImageDataset();
  pstrain::StatusOr<pstrain::data::ImageDataset> train = pstrain::data::ImageDataset();
  if (columns) {
    test_rows = pstrain::data::LoadFeaturizedRows(*spec, FLAGS_data_dir, /*train=*/false,
                                                  pstrain::nn::FeatureRequestOf(**model));
    if (!test_rows.ok()) return pstrain::ExitWith(test_rows.status(), pstrain::kExitBadInput);
    options.test_rows = &*test_rows;
  } else {
    test = pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "test");
    if (!test.ok()) return pstrain::ExitWith(test.status(), pstrain::kExitBadInput);
    train = pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "train");
    if (!train.ok()) return pstrain::ExitWith(train.status(), pstrain::kExitBadInput);
  }
  std::error_code ec;
  std::filesystem::create_directories(FLAGS_train_dir, ec);
  if (ec) {
    return pstrain::ExitWith(
        pstrain::IoError("cannot create --train_dir " + FLAGS_train_dir + ": " + ec.message()),
        pstrain::kExitBadInput);
  }

  pstrain::MetricsBoard board;
  std::unique_ptr<pstrain::HttpServer> http;
  if (FLAGS_http_port >= 0) {
    auto started =
        pstrain::HttpServer::Start(FLAGS_http_host, FLAGS_http_port, &board, pstrain::TaskTls());
    if (!started.ok()) return pstrain::ExitWith(started.status(), pstrain::kExitBadInput);
    http = std::move(started).value();
    LOG(INFO) << "status page: " << (http->https() ? "https" : "http") << "://"
              << (FLAGS_http_host == "0.0.0.0" ? "127.0.0.1" : FLAGS_http_host) << ":"
              << http->port() << "/ (also /healthz, /metrics, /status)";
  }
  options.board = &board;
  options.model_name = FLAGS_model;
  options.loss_is_sum = pstrain::nn::SumsLossOverBatch(*spec);
  options.input = pstrain::ImageInputOf(*spec);
  pstrain::Supervisor supervisor(model->get(), &fleet, columns ? nullptr : &*test,
                                 columns ? nullptr : &*train, &stop, options);
  pstrain::Status s = supervisor.Start();
  if (s.ok()) {
    s = supervisor.Monitor();
    if (s.code() == pstrain::Code::kFailedPrecondition) {
      // A worker failed, or never came: retrying the chief cannot mend it.
      supervisor.EndOnFailure(s);
      return pstrain::ExitWith(s, pstrain::kExitBadInput);
    }
  }
  if (s.ok()) s = supervisor.Finish();
  if (s.ok()) return pstrain::kExitDone;  // the job is done, whatever signal came since
  if (stop.requested()) {
    // A graceful stop before the end: save what training has reached (the
    // ps tasks keep it too) for the restarted chief.
    s = supervisor.SaveOnStop();
    // A failed save leaves the last checkpoint as it was; the stop is still
    // an eviction, retried like one.
    if (!s.ok()) LOG(ERROR) << "no checkpoint saved on stopping: " << s.ToString();
    return pstrain::ExitStopped(stop);
  }
  return pstrain::ExitWith(s, pstrain::kExitRetryable);
}
