// evaluator: the Evaluator replica type of Kubeflow's TFJob. Watches
// --train_dir for the chief's checkpoints and evaluates each new one's
// test accuracy (precision @ 1) on the test set (the 10,000 test images; a model of rows
// its test rows), with the moving averages where the checkpoint holds one
// for every variable, and a model of ids or columns with the checkpoint's
// embedding rows (chief/saved_rows.h). Each result is logged as
//   eval: model.ckpt-1200 test accuracy 0.8731 (10000 examples)
// (a model of rows adding ", auc 0.9057, log loss ...") and written as the
// scalar "eval/precision_at_1" (and "eval/auc", ...) at the checkpoint's
// step into the evaluator's own TensorBoard event file in --eval_dir.
//
// It reads only files and needs no cluster; it accepts --cluster_spec or
// TF_CONFIG (task type "evaluator") as Kubeflow passes them.
//
// It ends (exit 0) once it has seen the final checkpoint the chief marks
// at the end of training (chief/training_done.h), or at --run_once,
// --max_evaluations or --timeout_secs. Other exit codes, as every task's
// (core/task_main.h): 1 bad flags or input, or --run_once found no readable
// checkpoint; 2 bad cluster spec; 138 the event file could not be written
// (retryable); 143 SIGTERM (130 SIGINT) before then, which stops between
// evaluations.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "chief/checkpoint.h"
#include "chief/checkpoint_watcher.h"
#include "chief/evaluation.h"
#include "chief/saved_rows.h"
#include "chief/summary/event_writer.h"
#include "chief/training_done.h"
#include "cluster/cluster_flags.h"
#include "cluster/cpu_share_flags.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "core/thread_priority.h"
#include "data/data_flags.h"
#include "data/dataset_loader.h"
#include "data/feature_batches.h"
#include "data/mnist_dataset.h"
#include "nn/compute_threads.h"
#include "nn/model.h"
#include "nn/model_flags.h"
#include "nn/model_spec.h"
#include "nn/wide_deep_model.h"
#include "ps/variable_store.h"

DEFINE_string(train_dir, "", "The chief's train dir, where the checkpoints are (required)");
DEFINE_string(eval_dir, "",
              "Where the evaluator writes its event files (default <train_dir>/eval)");
DEFINE_string(
    model, "mnist",
    "Network the checkpoints hold: a built-in one (mnist, mnist_bn, cifar10, mnist_ids, "
    "wide_deep, fasttext, movielens, resnet20, dcn, deepfm, dlrm) or a ModelSpec text file "
    "(proto/model.proto)");
DEFINE_int32(eval_interval_secs, 60, "Look for new checkpoints this often");
DEFINE_bool(run_once, false, "Evaluate the latest readable checkpoint and exit");
DEFINE_string(checkpoint, "",
              "Evaluate this checkpoint (its prefix, e.g. runs/x/model.ckpt-1200; pstrain's or "
              "one TensorFlow wrote) once and exit, instead of --train_dir's");
DEFINE_bool(eval_use_moving_averages, true,
            "Evaluate the ExponentialMovingAverage shadows where a checkpoint "
            "holds them all");
DEFINE_int32(max_evaluations, 0, "Exit after this many evaluations (0: no limit)");
DEFINE_int32(timeout_secs, 0, "Exit when no new checkpoint appears for this long (0: never)");

namespace pstrain {
namespace {

// The model's parameters in variables() order from `ckpt` (moving averages
// per SelectEvalParams); logs which it evaluates.
StatusOr<std::vector<Tensor>> ModelParams(const nn::Model& model, const std::string& base,
                                          Checkpoint* ckpt, bool use_moving_averages) {
  bool averaged = false;
  PS_ASSIGN_OR_RETURN(std::vector<Tensor> params,
                      SelectEvalParams(model, ckpt->tensors, use_moving_averages,
                                       base + " (model " + FLAGS_model + ")", &averaged));
  if (averaged) {
    LOG(INFO) << base << ": evaluating the moving averages";
  } else if (use_moving_averages) {
    LOG(INFO) << base << ": holds no moving average for every trainable variable; evaluating "
              << "the variables";
  } else {
    LOG(INFO) << base << ": evaluating the variables (--noeval_use_moving_averages)";
  }
  return params;
}

// Evaluates checkpoints of one train dir and records the results.
// Thread-compatible.
class CheckpointEvaluator {
 public:
  // Borrows every argument.
  // A model of rows (CSV or text) evaluates on test_rows, any other on
  // test_set; a model of ids or columns with its checkpoint's rows.
  CheckpointEvaluator(const std::string& train_dir, nn::Model* model,
                      const data::ImageDataset* test_set, const data::FeaturizedRows* test_rows,
                      const ImageInput& input, EventWriter* writer)
      : train_dir_(train_dir),
        model_(model),
        test_set_(test_set),
        test_rows_(test_rows),
        input_(input),
        writer_(writer) {}

  // Evaluates checkpoint `base` (a name in the train dir), logs the result
  // and writes and flushes its summary: true. A checkpoint that cannot be
  // read (the error names the file and the tensor) or does not fit the model
  // is logged and skipped: false. Unavailable if the event file cannot be
  // written.
  StatusOr<bool> Evaluate(const std::string& base, bool use_moving_averages) {
    auto ckpt = ReadCheckpoint(train_dir_ + "/" + base);
    if (!ckpt.ok()) return Skip(base, ckpt.status());
    auto params = ModelParams(*model_, base, &*ckpt, use_moving_averages);
    if (!params.ok()) return Skip(base, params.status());
    auto result = EvaluateCheckpoint(*ckpt, *params);
    if (!result.ok()) return Skip(base, result.status());
    char line[256];
    std::snprintf(line, sizeof(line), "eval: %s test accuracy %.4f (%lld examples)", base.c_str(),
                  result->accuracy(), static_cast<long long>(result->examples));
    LOG(INFO) << line << result->MetricsSuffix();
    PS_RETURN_IF_ERROR(ForEachEvalScalar(*result, [&](const std::string& tag, double value) {
      return writer_->AddScalar(tag, ckpt->global_step, static_cast<float>(value));
    }));
    PS_RETURN_IF_ERROR(writer_->Flush());
    return true;
  }

 private:
  StatusOr<EvalResult> EvaluateCheckpoint(const Checkpoint& ckpt,
                                          const std::vector<Tensor>& params) {
    // A model of ids: the rows the checkpoint saved.
    std::optional<SavedRows> saved;
    RowPull pull_rows;
    if (!model_->lookups().empty()) {
      std::vector<proto::EmbeddingTableConfig> tables;
      for (const nn::EmbeddingLookup& lookup : model_->lookups()) tables.push_back(lookup.table);
      PS_ASSIGN_OR_RETURN(saved, SavedRows::Read(ckpt, train_dir_, tables));
      pull_rows = [&](std::vector<PsFleet::TableStep>* steps) { return saved->Pull(steps); };
    }
    return EvaluateTestSet(model_, params, test_set_, test_rows_, input_, pull_rows);
  }

  static bool Skip(const std::string& base, const Status& s) {
    LOG(ERROR) << "skipping checkpoint " << base << ": " << s.ToString();
    return false;
  }

  const std::string train_dir_;
  nn::Model* const model_;
  const data::ImageDataset* const test_set_;
  const data::FeaturizedRows* const test_rows_;
  const ImageInput input_;
  EventWriter* const writer_;
};

// --run_once: the newest of `names` (oldest first) that evaluates.
int RunOnce(const std::vector<std::string>& names, CheckpointEvaluator* evaluator) {
  for (auto it = names.rbegin(); it != names.rend(); ++it) {
    auto done = evaluator->Evaluate(*it, FLAGS_eval_use_moving_averages);
    if (!done.ok()) return ExitWith(done.status(), kExitRetryable);
    if (*done) return kExitDone;
  }
  return ExitWith(
      NotFound(FLAGS_checkpoint.empty()
                   ? "nothing to evaluate: no readable checkpoint in --train_dir " + FLAGS_train_dir
                   : "--checkpoint " + FLAGS_checkpoint + " could not be evaluated"),
      kExitBadInput);
}

// Evaluates each new checkpoint, looking every --eval_interval_secs, until
// the final checkpoint of the training, --max_evaluations, --timeout_secs or a
// stop signal.
int Watch(CheckpointWatcher* watcher, CheckpointEvaluator* evaluator, const StopNotice& stop) {
  using Clock = std::chrono::steady_clock;
  const std::chrono::seconds interval(FLAGS_eval_interval_secs), timeout(FLAGS_timeout_secs);
  int evaluations = 0;
  Clock::time_point last_new = Clock::now();
  int64_t newest_seen = -1;  // the step of the newest checkpoint the watcher returned
  for (;;) {
    const Clock::time_point round_start = Clock::now();
    // Read before the listing: the chief marks the end after the final
    // checkpoint, so a listing after the mark includes that checkpoint.
    auto final_step = FinalCheckpointStep(watcher->dir());
    if (!final_step.ok()) LOG(WARNING) << final_step.status().ToString();
    auto names = watcher->NewCheckpoints();
    if (!names.ok()) {
      LOG(WARNING) << names.status().ToString() << "; looking again in " << interval.count()
                   << " s";
    } else if (!names->empty()) {
      last_new = round_start;
      for (const std::string& base : *names) {
        if (stop.requested()) break;
        newest_seen = std::max(newest_seen, CheckpointStep(base));
        auto done = evaluator->Evaluate(base, FLAGS_eval_use_moving_averages);
        if (!done.ok()) return ExitWith(done.status(), kExitRetryable);
        if (*done && ++evaluations == FLAGS_max_evaluations) {
          LOG(INFO) << "done after " << evaluations << " evaluations (--max_evaluations)";
          return kExitDone;
        }
      }
    }
    if (!stop.requested() && names.ok() && final_step.ok() && *final_step >= 0 &&
        newest_seen >= *final_step) {
      LOG(INFO) << "training is done (final checkpoint model.ckpt-" << *final_step
                << "); done after " << evaluations << " evaluations";
      return kExitDone;
    }
    if (names.ok() && names->empty() && timeout.count() > 0 && round_start - last_new >= timeout) {
      LOG(INFO) << "no new checkpoint for " << timeout.count() << " s (--timeout_secs); done after "
                << evaluations << " evaluations";
      return kExitDone;
    }
    Clock::time_point next = round_start + interval;
    if (timeout.count() > 0) next = std::min(next, last_new + timeout);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
    if (stop.requested() || stop.WaitFor(std::max(wait, std::chrono::milliseconds(0)))) {
      LOG(INFO) << "stopping after " << evaluations << " evaluations";
      // A stop after the job has ended (the operator cleaning up) is no
      // eviction.
      auto ended = FinalCheckpointStep(watcher->dir());
      if (ended.ok() && *ended >= 0) {
        LOG(INFO) << "training is done (final checkpoint model.ckpt-" << *ended << ")";
        return kExitDone;
      }
      return ExitStopped(stop);
    }
  }
}

// The evaluator's own flags checked; --checkpoint names the train dir as
// its directory.
Status CheckFlags() {
  if (!FLAGS_checkpoint.empty()) {
    if (!FLAGS_train_dir.empty()) {
      return InvalidArgument("--checkpoint and --train_dir exclude each other");
    }
    FLAGS_train_dir = std::filesystem::path(FLAGS_checkpoint).parent_path().string();
    if (FLAGS_train_dir.empty()) FLAGS_train_dir = ".";
  }
  if (FLAGS_train_dir.empty()) return InvalidArgument("--train_dir or --checkpoint is required");
  if (FLAGS_eval_interval_secs <= 0) {
    return InvalidArgument("--eval_interval_secs must be positive");
  }
  if (FLAGS_max_evaluations < 0 || FLAGS_timeout_secs < 0) {
    return InvalidArgument("--max_evaluations and --timeout_secs must be >= 0");
  }
  return OkStatus();
}

int Main(const StopNotice& stop) {
  const Status flags = CheckFlags();
  if (!flags.ok()) return ExitWith(flags, kExitBadInput);
  // An evaluator outside the cluster shares its host with no worker.
  cluster::ClusterConfig config;
  config.task = {"evaluator", 0};
  if (!FLAGS_cluster_spec.empty() || std::getenv("TF_CONFIG") != nullptr) {
    config = cluster::ClusterConfigFromFlagsOrDie("evaluator");
    LOG(INFO) << "task " << config.task.ToString();
  }
  // The evaluator does nothing but evaluate: all of it yields to the workers
  // beside it, its compute threads (started next) too.
  if (cluster::EvaluateAtIdlePriorityFromFlagsOrDie(config)) {
    const Status lowered = RunThisThreadAtIdlePriority();
    if (!lowered.ok()) LOG(WARNING) << "evaluating at normal priority: " << lowered.ToString();
  }
  nn::SetComputeThreads(cluster::ComputeThreadsFromFlagsOrDie(config));
  auto loaded = nn::LoadModelFromFlags(FLAGS_model);
  if (!loaded.ok()) return ExitWith(loaded.status(), kExitBadInput);
  const proto::ModelSpec& spec = loaded->spec;
  nn::Model& model = *loaded->model;
  // A model of rows evaluates on its test rows, any other on the test images.
  const bool rows = data::ReadsRows(spec);
  StatusOr<data::FeaturizedRows> test_rows = data::FeaturizedRows();
  StatusOr<data::ImageDataset> test = data::ImageDataset();
  if (rows) {
    test_rows = data::LoadFeaturizedRows(spec, FLAGS_data_dir, /*train=*/false,
                                         nn::FeatureRequestOf(model));
    if (!test_rows.ok()) return ExitWith(test_rows.status(), kExitBadInput);
  } else {
    test = data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "test");
    if (!test.ok()) return ExitWith(test.status(), kExitBadInput);
  }
  const std::string eval_dir = FLAGS_eval_dir.empty() ? FLAGS_train_dir + "/eval" : FLAGS_eval_dir;
  auto writer = EventWriter::Create(eval_dir);
  if (!writer.ok()) {
    // Another evaluator started this second on this host: a retry will do.
    const bool retry = writer.status().code() == Code::kAlreadyExists;
    return ExitWith(writer.status(), retry ? kExitRetryable : kExitBadInput);
  }
  LOG(INFO) << "evaluating checkpoints in " << FLAGS_train_dir << (FLAGS_run_once ? " once" : "")
            << "; events in " << (*writer)->path();

  CheckpointWatcher watcher(FLAGS_train_dir);
  CheckpointEvaluator evaluator(FLAGS_train_dir, &model, rows ? nullptr : &*test,
                                rows ? &*test_rows : nullptr, ImageInputOf(spec), writer->get());
  if (!FLAGS_checkpoint.empty()) {
    return RunOnce({std::filesystem::path(FLAGS_checkpoint).filename().string()}, &evaluator);
  }
  if (!FLAGS_run_once) return Watch(&watcher, &evaluator, stop);
  auto names = watcher.NewCheckpoints();
  if (!names.ok()) return ExitWith(names.status(), kExitBadInput);
  return RunOnce(*names, &evaluator);
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::StopNotice stop;
  pstrain::HandleStopSignals(&stop);
  pstrain::InitTaskMain(
      "evaluates the chief's checkpoints on the test set.\n"
      "  evaluator --train_dir=runs/x [--run_once]\n"
      "  evaluator --checkpoint=runs/x/model.ckpt-1200   (or a TensorFlow checkpoint)\n"
      "Accepts --cluster_spec or TF_CONFIG (task type "
      "\"evaluator\") but needs neither.",
      &argc, &argv);
  return pstrain::Main(stop);
}
