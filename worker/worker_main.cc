// worker: one training task. Reads its shard of the input and trains the
// model against the ps tasks until max_steps or the last epoch.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "cluster/cluster_flags.h"
#include "cluster/cpu_share.h"
#include "cluster/cpu_share_flags.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "data/data_flags.h"
#include "data/dataset_loader.h"
#include "data/feature_batches.h"
#include "data/input_pipeline.h"
#include "data/mnist_dataset.h"
#include "nn/compute_threads.h"
#include "nn/gpus.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "nn/towers.h"
#include "nn/wide_deep_model.h"
#include "ps/client/ps_fleet.h"
#include "ps/optimizer_flags.h"
#include "ps/ps_core.h"
#include "ps/rpc/ps_connections.h"
#include "ps/sync_flags.h"
#include "worker/heartbeat_sender.h"
#include "worker/overlap_choice.h"
#include "worker/tower_choice.h"
#include "worker/trainer.h"

DEFINE_string(model, "mnist",
              "Network to train: a built-in one (mnist, mnist_bn, cifar10, mnist_ids, wide_deep, "
              "fasttext, movielens) or a ModelSpec "
              "text file (proto/model.proto)");
DEFINE_int32(batch_size, 128, "Examples per step of each tower");
DEFINE_int32(num_towers, 1,
             "Towers on the CPU: each runs the model on its own batch of --batch_size on its "
             "share of the cores; their gradients are averaged and pushed once per step");
DEFINE_int32(num_gpus, 0,
             "Towers on GPUs, one on each of cuda:0 .. cuda:K-1, each on its own batch of "
             "--batch_size (CUDA backend: cuDNN, cuBLAS); where this host has no GPU, as many "
             "towers on the CPU, and the log says why");
DEFINE_int64(max_steps, 0, "Stop when global_step reaches this (0: no limit)");
DEFINE_int64(epochs, 1, "Passes over this worker's shard of the input (0: no limit)");
DEFINE_int64(train_examples, 0,
             "Train on the first this many examples of the training set (0: all of them)");
DEFINE_int64(min_after_dequeue, -1,
             "Training shuffle buffer: examples kept in it after each batch (0: shuffle each "
             "epoch's shard instead; -1: the model's input spec, cifar10: 20000)");
DEFINE_int32(input_threads, 1, "Threads that read and preprocess training examples");
DEFINE_int32(log_frequency, 10, "Log a progress line every this many steps");
DEFINE_uint64(seed, 0, "Seed of the input's shuffling (each worker adds its index)");
DEFINE_int32(ready_timeout_secs, 600, "Give up waiting for the chief to initialize after this");
DEFINE_int32(retry_timeout_secs, 300,
             "Keep retrying a step that fails because a ps is down or restarting this long");
DEFINE_string(weight_decay, "",
              "L2 weight decay per variable, e.g. local3/weights=0.004,local4/weights=0.004");
DEFINE_string(gradient_multipliers, "", "Gradient multipliers per variable, e.g. conv1/biases=2");
DEFINE_double(clip_gradients_by_value, 0, "Clip every gradient element to [-v, v] (0: off)");
DEFINE_double(clip_gradients_by_norm, 0, "Clip each variable's gradient to this L2 norm (0: off)");
DEFINE_double(clip_gradients_by_global_norm, 0,
              "Clip all gradients together to this global norm (0: off)");
DEFINE_string(wire_dtype, "float32",
              "How gradients and pulled variables travel to and from the ps: float32, or "
              "bfloat16 (half the bytes; over the ps's tensor channel only, the ps keeps and "
              "applies float32)");
DEFINE_bool(tensor_shm, true,
            "Let the tensor channel to a ps on this host (a loopback address) carry tensors "
            "through shared memory instead of the socket");
DEFINE_string(overlap_transfers, "auto",
              "Overlap each step's pull and push with its computation, layer by layer: on, off, "
              "or auto (on when the compute threads of this host's workers leave a CPU free)");
DEFINE_int32(test_only_step_delay_ms, 0, "Test only: sleep this long in every step");

namespace {

// Ends the worker on an error retrying cannot mend (exit 1), first telling
// ps:0, so the chief ends the job naming it instead of waiting for this
// worker: best effort, the exit code says it either way.
int FailJob(int index, pstrain::PsFleet* fleet, const pstrain::Status& error) {
  std::string failure = error.ToString();
  if (failure.size() > pstrain::PsCore::kMaxReasonBytes) {
    failure.resize(pstrain::PsCore::kMaxReasonBytes);
  }
  const pstrain::Status told = fleet->client(0)->WorkerDone(index, failure);
  if (!told.ok()) LOG(WARNING) << "could not tell ps:0 of the failure: " << told.ToString();
  return pstrain::ExitWith(error, pstrain::kExitBadInput);
}

// Waits for the model on the ps tasks, trains until the end and reports
// done: the task's exit code.
int Train(int index, pstrain::nn::Model* model, pstrain::PsFleet* fleet,
          pstrain::data::BatchSource* input, bool overlap, bool loss_is_sum,
          const pstrain::proto::SyncConfig& sync, pstrain::StopNotice* stop) {
  pstrain::Status ready = fleet->WaitForPs(/*require_ready=*/true, stop,
                                           std::chrono::seconds(FLAGS_ready_timeout_secs));
  if (!ready.ok()) {
    if (stop->requested()) return pstrain::ExitStopped(*stop);
    if (ready.code() == pstrain::Code::kFailedPrecondition) {
      return FailJob(
          index, fleet,
          ready.Annotate("worker:" + std::to_string(index) + " runs model " + FLAGS_model));
    }
    return pstrain::ExitWith(ready, pstrain::kExitRetryable);
  }
  LOG(INFO) << "worker:" << index << " model is ready; training";

  pstrain::HeartbeatSender heartbeat(fleet->client(0), index, std::chrono::seconds(1));
  pstrain::TrainerOptions topts;
  topts.worker_index = index;
  topts.max_steps = FLAGS_max_steps;
  topts.log_frequency = FLAGS_log_frequency;
  topts.sync = sync.enabled();
  topts.step_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(FLAGS_step_timeout_secs * 1000));
  topts.staleness = FLAGS_staleness;
  topts.step_delay = std::chrono::milliseconds(FLAGS_test_only_step_delay_ms);
  topts.retry_budget = std::chrono::seconds(FLAGS_retry_timeout_secs);
  topts.overlap = overlap;
  topts.loss_is_sum = loss_is_sum;
  auto wd = pstrain::ParseVariableFloats("weight_decay", FLAGS_weight_decay);
  if (!wd.ok()) return FailJob(index, fleet, wd.status());
  auto multipliers =
      pstrain::ParseVariableFloats("gradient_multipliers", FLAGS_gradient_multipliers);
  if (!multipliers.ok()) return FailJob(index, fleet, multipliers.status());
  topts.gradients.weight_decay = *wd;
  topts.gradients.multipliers = *multipliers;
  topts.gradients.clip_value = static_cast<float>(FLAGS_clip_gradients_by_value);
  topts.gradients.clip_norm = static_cast<float>(FLAGS_clip_gradients_by_norm);
  topts.gradients.clip_global_norm = static_cast<float>(FLAGS_clip_gradients_by_global_norm);
  std::vector<std::string> names;
  std::vector<bool> trainable;
  for (const auto& var : model->variables()) {
    names.push_back(var.name);
    trainable.push_back(var.trainable);
  }
  const pstrain::Status options_fit =
      pstrain::CheckGradientOptions(topts.gradients, names, trainable);
  if (!options_fit.ok()) {
    return FailJob(index, fleet, options_fit.Annotate("model " + FLAGS_model));
  }
  pstrain::Trainer trainer(model, fleet, input, &heartbeat, stop, topts);
  auto result = trainer.Run();
  if (!result.ok() && stop->requested()) return pstrain::ExitStopped(*stop);
  if (!result.ok()) {
    if (result.status().code() == pstrain::Code::kInvalidArgument) {
      return FailJob(index, fleet, result.status());
    }
    return pstrain::ExitWith(result.status(), pstrain::kExitRetryable);
  }
  LOG(INFO) << "worker:" << index << (result->stopped ? " stopped after " : " done after ")
            << result->local_steps << " local steps, global_step " << result->global_step << ", "
            << result->stale_gradients << " stale gradients dropped, batch loss "
            << result->first_loss << " -> " << result->last_loss
            << (loss_is_sum ? " (sums over a batch)" : " (means over a batch)");
  if (result->stopped) {
    // A graceful stop, not the end of this worker's training: a restarted
    // worker carries on, so it does not report done.
    return pstrain::ExitStopped(*stop);
  }
  heartbeat.Stop();  // no heartbeat may land after WorkerDone and undo it
  pstrain::Status done = fleet->client(0)->WorkerDone(index, "");
  if (!done.ok()) return pstrain::ExitWith(done, pstrain::kExitRetryable);
  return pstrain::kExitDone;
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::StopNotice stop;
  pstrain::HandleStopSignals(&stop);
  pstrain::InitTaskMain(
      "a pstrain training worker.\n"
      "  worker --job=worker --task=0 --cluster_spec=cluster.json --model=mnist\n"
      "or, with no cluster flags, from TF_CONFIG as Kubeflow's TFJob sets it.",
      &argc, &argv);

  const auto config = pstrain::cluster::ClusterConfigFromFlagsOrDie("worker");
  const int compute_threads = pstrain::cluster::ComputeThreadsFromFlagsOrDie(config);
  pstrain::nn::SetComputeThreads(compute_threads);
  const int index = config.task.index;
  auto overlap = pstrain::ChooseOverlap(FLAGS_overlap_transfers, compute_threads,
                                        pstrain::cluster::ReadCpuBudget(), config);
  if (!overlap.ok()) return pstrain::ExitWith(overlap.status(), pstrain::kExitBadInput);
  LOG(INFO) << "worker:" << index
            << (overlap->overlap ? " overlaps its transfers with its computation: "
                                 : " transfers between its computations: ")
            << overlap->why;
  if (FLAGS_batch_size <= 0) {
    return pstrain::ExitWith(pstrain::InvalidArgument("--batch_size must be positive"),
                             pstrain::kExitBadInput);
  }
  auto towers = pstrain::ChooseTowers(FLAGS_num_towers, FLAGS_num_gpus, pstrain::nn::ProbeGpus());
  if (!towers.ok()) return pstrain::ExitWith(towers.status(), pstrain::kExitBadInput);
  LOG(INFO) << "worker:" << index << " runs " << towers->why;
  auto spec = pstrain::nn::LoadModelSpec(FLAGS_model);
  if (!spec.ok()) return pstrain::ExitWith(spec.status(), pstrain::kExitBadInput);
  const pstrain::Status data_flags = pstrain::data::ApplyDataFlags(&*spec);
  if (!data_flags.ok()) return pstrain::ExitWith(data_flags, pstrain::kExitBadInput);
  // A model of columns trains on one tower of its own; every other model on
  // the towers chosen.
  auto model = [&]() -> pstrain::StatusOr<std::unique_ptr<pstrain::nn::Model>> {
    if (spec->has_wide_deep()) {
      PS_ASSIGN_OR_RETURN(auto wide_deep, pstrain::nn::WideDeepModel::Create(*spec, FLAGS_seed));
      return std::unique_ptr<pstrain::nn::Model>(std::move(wide_deep));
    }
    PS_ASSIGN_OR_RETURN(auto towers_model,
                        pstrain::nn::Towers::Create(*spec, towers->towers, towers->devices));
    return std::unique_ptr<pstrain::nn::Model>(std::move(towers_model));
  }();
  if (!model.ok()) return pstrain::ExitWith(model.status(), pstrain::kExitBadInput);
  LOG(INFO) << "worker:" << index << " runs " << FLAGS_model << " on " << (*model)->backend();
  auto sync = pstrain::SyncConfigFromFlags(config.spec.NumTasks("worker"));
  if (!sync.ok()) return pstrain::ExitWith(sync.status(), pstrain::kExitBadInput);
  auto optimizer = pstrain::OptimizerConfigFromFlags(spec->recipe(), sync->enabled());
  if (!optimizer.ok()) return pstrain::ExitWith(optimizer.status(), pstrain::kExitBadInput);

  auto layout = pstrain::PsFleet::LayoutFromFlags(config.spec.NumTasks("ps"), (*model)->variables(),
                                                  *pstrain::OptimizerSlotCount(*optimizer));
  if (!layout.ok()) return pstrain::ExitWith(layout.status(), pstrain::kExitBadInput);
  for (const pstrain::nn::EmbeddingLookup& lookup : (*model)->lookups()) {
    layout->tables.push_back(lookup.table);  // spread over every ps by key
  }
  if (FLAGS_wire_dtype != "float32" && FLAGS_wire_dtype != "bfloat16") {
    return pstrain::ExitWith(
        pstrain::InvalidArgument("--wire_dtype=" + FLAGS_wire_dtype + ": float32 or bfloat16"),
        pstrain::kExitBadInput);
  }
  pstrain::PsClientOptions transport;
  if (FLAGS_wire_dtype == "bfloat16") transport.wire_dtype = pstrain::proto::DT_BFLOAT16;
  transport.shared_memory = FLAGS_tensor_shm;
  pstrain::PsConnections connections =
      pstrain::ConnectToPs(config.spec, transport, &layout->variables);
  auto fleet = std::make_unique<pstrain::PsFleet>(
      std::move(connections.connections), std::move(*layout), std::move(connections.memory));

  // This worker's part of the data: a shard of the split, not the split.
  const pstrain::data::Shard shard{index, config.spec.NumTasks("worker")};
  if (pstrain::data::ReadsRows(*spec)) {
    auto rows = pstrain::data::LoadFeaturizedRows(*spec, FLAGS_data_dir, /*train=*/true,
                                                  pstrain::nn::FeatureRequestOf(**model));
    if (!rows.ok()) return pstrain::ExitWith(rows.status(), pstrain::kExitBadInput);
    auto source = pstrain::data::FeatureBatchSource::Create(
        &*rows, FLAGS_batch_size, shard, FLAGS_seed + static_cast<uint64_t>(index), FLAGS_epochs);
    if (!source.ok()) return pstrain::ExitWith(source.status(), pstrain::kExitBadInput);
    LOG(INFO) << "worker:" << index << " reads " << (*source)->examples_per_epoch()
              << " rows per epoch of " << FLAGS_data_dir << " (" << shard.ToString() << ")";
    return Train(index, model->get(), fleet.get(), source->get(), overlap->overlap,
                 pstrain::nn::SumsLossOverBatch(*spec), *sync, &stop);
  }
  if (FLAGS_train_examples < 0) {
    return pstrain::ExitWith(pstrain::InvalidArgument("--train_examples must be >= 0"),
                             pstrain::kExitBadInput);
  }
  pstrain::data::ExampleSubset examples;
  examples.shard = shard;
  examples.limit = FLAGS_train_examples;
  auto train = pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "train", examples);
  if (!train.ok()) return pstrain::ExitWith(train.status(), pstrain::kExitBadInput);
  pstrain::data::InputPipelineOptions qopts;
  qopts.batch_size = FLAGS_batch_size * towers->towers;  // a slice per tower
  qopts.shard = shard;
  qopts.seed = FLAGS_seed + static_cast<uint64_t>(index);
  qopts.epochs = FLAGS_epochs;
  qopts.preprocessing = spec->input().preprocessing();
  const bool images = spec->input_shape_size() == 3;  // else ids (PIXEL_IDS)
  qopts.height = images ? static_cast<int>(spec->input_shape(0)) : 0;
  qopts.width = images ? static_cast<int>(spec->input_shape(1)) : 0;
  qopts.min_after_dequeue =
      FLAGS_min_after_dequeue >= 0 ? FLAGS_min_after_dequeue : spec->input().min_after_dequeue();
  qopts.reader_threads = FLAGS_input_threads;
  if (images && train->depth != spec->input_shape(2)) {
    return pstrain::ExitWith(
        pstrain::InvalidArgument("the data in " + FLAGS_data_dir + " have " +
                                 std::to_string(train->depth) + " channels, model " + FLAGS_model +
                                 " takes " + std::to_string(spec->input_shape(2))),
        pstrain::kExitBadInput);
  }
  auto input = pstrain::data::InputPipeline::Create(&*train, qopts);
  if (!input.ok()) return pstrain::ExitWith(input.status(), pstrain::kExitBadInput);
  LOG(INFO) << "worker:" << index << " reads " << (*input)->examples_per_epoch()
            << " examples per epoch from " << FLAGS_data_dir << " (" << FLAGS_data_format
            << " format, " << shard.ToString() << ", "
            << pstrain::proto::InputSpec::Preprocessing_Name(qopts.preprocessing)
            << (qopts.min_after_dequeue > 0
                    ? ", shuffle buffer of " + std::to_string(qopts.min_after_dequeue) + "+"
                    : "")
            << ")";

  return Train(index, model->get(), fleet.get(), input->get(), overlap->overlap,
               pstrain::nn::SumsLossOverBatch(*spec), *sync, &stop);
}
