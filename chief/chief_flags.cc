#include "chief/chief_flags.h"

#include <chrono>
#include <utility>

#include "chief/eval_metrics.h"
#include "chief/tf_names.h"
#include "chief/warm_start.h"
#include "data/dataset_loader.h"
#include "ps/optimizer.h"
#include "ps/optimizer_flags.h"
#include "ps/sync_flags.h"

DEFINE_string(model, "mnist",
              "Network being trained: a built-in one (mnist, mnist_bn, cifar10, mnist_ids, "
              "wide_deep, fasttext, movielens, resnet20, dcn, deepfm, dlrm) , a ModelSpec "
              "text file (proto/model.proto), or keras:FILE.json (a Keras model's to_json())");
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
DEFINE_int32(batch_size, 128,
             "The workers' batch size, for examples/sec (unset: the model recipe's, else 128)");
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

namespace pstrain {
namespace {

bool Given(const char* flag) { return !gflags::GetCommandLineFlagInfoOrDie(flag).is_default; }

// --checkpoint_format, --delta_checkpoints and the checkpoints' cadence.
Status CheckpointOptionsFromFlags(SupervisorOptions* options) {
  if (FLAGS_checkpoint_format != "pstrain" && FLAGS_checkpoint_format != "tensorflow") {
    return InvalidArgument("--checkpoint_format must be pstrain or tensorflow, not " +
                           FLAGS_checkpoint_format);
  }
  if (FLAGS_delta_checkpoints < 0) return InvalidArgument("--delta_checkpoints must be >= 0");
  options->checkpoint_format = FLAGS_checkpoint_format == "tensorflow"
                                   ? CheckpointFormat::kTensorFlow
                                   : CheckpointFormat::kPstrain;
  options->save_checkpoint_secs = FLAGS_save_checkpoint_secs;
  options->save_checkpoint_steps = FLAGS_save_checkpoint_steps;
  options->max_to_keep = FLAGS_max_to_keep;
  options->delta_checkpoints = FLAGS_delta_checkpoints;
  options->keep_checkpoint_every_n_hours = FLAGS_keep_checkpoint_every_n_hours;
  return OkStatus();
}

// --target_metric, --target_accuracy and --eval_secs.
Status EvalOptionsFromFlags(const proto::ModelSpec& spec, SupervisorOptions* options) {
  if (FLAGS_target_metric != "accuracy") {
    Status known = MetricNamed(EvalMetrics(), FLAGS_target_metric).status();
    if (known.ok() && !data::ReadsRows(spec)) {
      known = InvalidArgument("--target_metric=" + FLAGS_target_metric + ": model " + FLAGS_model +
                              " reports its test accuracy only");
    }
    PS_RETURN_IF_ERROR(known);
  }
  const bool unbounded = LowerIsBetter(FLAGS_target_metric);  // a log loss
  if (FLAGS_eval_secs < 0 || FLAGS_target_accuracy < 0 ||
      (FLAGS_target_accuracy > 1 && !unbounded) ||
      (FLAGS_target_accuracy > 0 && FLAGS_eval_secs == 0)) {
    return InvalidArgument(
        "--eval_secs must be >= 0 and --target_accuracy in [0, 1], "
        "with --eval_secs > 0 when it is set");
  }
  options->target_metric = FLAGS_target_metric;
  options->eval_secs = FLAGS_eval_secs;
  options->target_accuracy = FLAGS_target_accuracy;
  options->eval_use_moving_averages = Given("eval_use_moving_averages")
                                          ? FLAGS_eval_use_moving_averages
                                          : spec.recipe().eval_use_moving_averages();
  return OkStatus();
}

// What the ps tasks are initialized with: moving averages, sync or
// async, the optimizer, the heartbeat timeout.
Status InitFromFlags(const proto::ModelSpec& spec, int num_workers, proto::InitHeader* init) {
  const double ema_decay = Given("ema_decay") ? FLAGS_ema_decay : spec.recipe().ema_decay();
  if (ema_decay < 0 || ema_decay >= 1) return InvalidArgument("--ema_decay must be in [0, 1)");
  init->set_num_workers(num_workers);
  init->set_ema_decay(static_cast<float>(ema_decay));
  PS_ASSIGN_OR_RETURN(*init->mutable_sync(), SyncConfigFromFlags(num_workers));
  PS_ASSIGN_OR_RETURN(*init->mutable_optimizer(),
                      PsOptimizerFromFlags(spec, init->sync().enabled()));
  init->set_heartbeat_timeout_secs(static_cast<float>(FLAGS_heartbeat_timeout_secs));
  return OkStatus();
}

}  // namespace

StatusOr<SupervisorOptions> SupervisorOptionsFromFlags(const proto::ModelSpec& spec,
                                                       int num_workers) {
  SupervisorOptions options;
  options.train_dir = FLAGS_train_dir;
  options.seed = FLAGS_seed;
  options.num_workers = num_workers;
  options.startup_timeout = std::chrono::seconds(FLAGS_startup_timeout_secs);
  options.ps_lost_timeout = std::chrono::seconds(FLAGS_ps_lost_timeout_secs);
  options.progress_interval = std::chrono::seconds(FLAGS_progress_secs);
  options.step_timeout = std::chrono::duration<double>(FLAGS_step_timeout_secs);
  options.save_summaries_steps = FLAGS_save_summaries_steps;
  options.batch_size = FLAGS_batch_size;
  options.model_name = FLAGS_model;
  options.warm_start_from = FLAGS_warm_start_from;
  PS_RETURN_IF_ERROR(CheckpointOptionsFromFlags(&options));
  PS_RETURN_IF_ERROR(EvalOptionsFromFlags(spec, &options));
  PS_RETURN_IF_ERROR(InitFromFlags(spec, num_workers, &options.init));
  return options;
}

StatusOr<std::map<std::string, Tensor>> WarmStartFromFlags(const nn::Model& model,
                                                           const proto::InitHeader& init) {
  if (FLAGS_warm_start_from.empty()) {
    if (Given("warm_start_vars") || Given("warm_start_map") || Given("warm_start_slots")) {
      return InvalidArgument(
          "--warm_start_vars, --warm_start_map and --warm_start_slots need --warm_start_from");
    }
    return std::map<std::string, Tensor>();
  }
  WarmStartOptions warm;
  warm.prefix = FLAGS_warm_start_from;
  warm.vars = FLAGS_warm_start_vars;
  warm.map = FLAGS_warm_start_map;
  warm.slots = FLAGS_warm_start_slots;
  auto created = Optimizer::Create(init.optimizer());
  if (warm.slots && created.ok()) warm.slot_names = (*created)->slot_names();
  warm.tf_name = TfCheckpointNames(model.variables(), init.optimizer());
  warm.moving_average = init.ema_decay() > 0;
  return WarmStartValues(model.variables(), warm);
}

}  // namespace pstrain
