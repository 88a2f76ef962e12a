// worker: one training task. Reads its shard of the input and trains the
// model against the ps tasks until max_steps or the last epoch.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include "cluster/cluster_flags.h"
#include "cluster/cpu_share.h"
#include "cluster/cpu_share_flags.h"
#include "cluster/placement_flags.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "data/data_flags.h"
#include "data/dataset_loader.h"
#include "data/feature_batches.h"
#include "data/input_pipeline.h"
#include "data/mnist_dataset.h"
#include "nn/compute_threads.h"
#include "nn/fasttext_model.h"
#include "nn/gpus.h"
#include "nn/model.h"
#include "nn/model_flags.h"
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
#include "worker/worker_flags.h"

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
          pstrain::data::BatchSource* input, bool overlap, const pstrain::proto::ModelSpec& spec,
          int num_workers, const pstrain::proto::SyncConfig& sync, pstrain::StopNotice* stop) {
  const bool loss_is_sum = pstrain::nn::SumsLossOverBatch(spec);
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

  auto topts = pstrain::TrainerOptionsFromFlags(index, *model, sync, overlap, loss_is_sum);
  if (!topts.ok()) return FailJob(index, fleet, topts.status());
  // The run's global steps: every worker's batches of its shard, each epoch.
  const int64_t batches = (input->examples_per_epoch() + FLAGS_batch_size - 1) / FLAGS_batch_size;
  const int64_t steps_of_run = batches * FLAGS_epochs * num_workers;
  auto example_rate = pstrain::ExampleLearningRateFromFlags(spec, steps_of_run);
  if (!example_rate.ok()) return FailJob(index, fleet, example_rate.status());
  topts->example_learning_rate = *example_rate;
  pstrain::HeartbeatSender heartbeat(fleet->client(0), index, std::chrono::seconds(1));
  pstrain::Trainer trainer(model, fleet, input, &heartbeat, stop, *topts);
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

namespace pstrain {

// How tensors travel to and from the ps tasks (--wire_dtype, --tensor_shm).
StatusOr<PsClientOptions> TransportFromFlags() {
  if (FLAGS_wire_dtype != "float32" && FLAGS_wire_dtype != "bfloat16") {
    return InvalidArgument("--wire_dtype=" + FLAGS_wire_dtype + ": float32 or bfloat16");
  }
  PsClientOptions transport;
  if (FLAGS_wire_dtype == "bfloat16") transport.wire_dtype = proto::DT_BFLOAT16;
  transport.shared_memory = FLAGS_tensor_shm;
  return transport;
}

// A model of columns, and fastText's, train on one tower of their own;
// every other model on the towers chosen.
StatusOr<std::unique_ptr<nn::Model>> BuildModel(const proto::ModelSpec& spec,
                                                const TowerChoice& towers) {
  if (spec.has_wide_deep()) {
    PS_ASSIGN_OR_RETURN(auto wide_deep, nn::WideDeepModel::Create(spec, FLAGS_seed));
    return std::unique_ptr<nn::Model>(std::move(wide_deep));
  }
  if (spec.loss_reduction() == proto::EXAMPLE_BY_EXAMPLE) {
    PS_ASSIGN_OR_RETURN(auto fasttext, nn::FastTextModel::Create(spec, FLAGS_seed));
    return std::unique_ptr<nn::Model>(std::move(fasttext));
  }
  PS_ASSIGN_OR_RETURN(auto towers_model, nn::Towers::Create(spec, towers.towers, towers.devices));
  return std::unique_ptr<nn::Model>(std::move(towers_model));
}

// This worker's shard of the training images (or ids) into *train, and
// the pipeline that reads and preprocesses them as the model's input spec
// says, a batch of --batch_size for each of `towers`.
StatusOr<std::unique_ptr<data::InputPipeline>> ImageInput(const proto::ModelSpec& spec, int index,
                                                          const data::Shard& shard, int towers,
                                                          bool idle_priority,
                                                          data::ImageDataset* train) {
  if (FLAGS_train_examples < 0) {
    return InvalidArgument("--train_examples must be >= 0");
  }
  data::ExampleSubset examples;
  examples.shard = shard;
  examples.limit = FLAGS_train_examples;
  PS_ASSIGN_OR_RETURN(*train,
                      data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "train", examples));
  data::InputPipelineOptions qopts;
  qopts.batch_size = FLAGS_batch_size * towers;  // a slice per tower
  qopts.shard = shard;
  qopts.seed = FLAGS_seed + static_cast<uint64_t>(index);
  qopts.epochs = FLAGS_epochs;
  qopts.preprocessing = spec.input().preprocessing();
  const bool images = spec.input_shape_size() == 3;  // else ids (PIXEL_IDS)
  qopts.height = images ? static_cast<int>(spec.input_shape(0)) : 0;
  qopts.width = images ? static_cast<int>(spec.input_shape(1)) : 0;
  qopts.min_after_dequeue =
      FLAGS_min_after_dequeue >= 0 ? FLAGS_min_after_dequeue : spec.input().min_after_dequeue();
  qopts.reader_threads = FLAGS_input_threads;
  qopts.idle_priority = idle_priority;
  if (images && train->depth != spec.input_shape(2)) {
    return InvalidArgument("the data in " + FLAGS_data_dir + " have " +
                           std::to_string(train->depth) + " channels, model " + FLAGS_model +
                           " takes " + std::to_string(spec.input_shape(2)));
  }
  PS_ASSIGN_OR_RETURN(auto input, data::InputPipeline::Create(train, qopts));
  LOG(INFO) << "worker:" << index << " reads " << input->examples_per_epoch()
            << " examples per epoch from " << FLAGS_data_dir << " (" << FLAGS_data_format
            << " format, " << shard.ToString() << ", "
            << proto::InputSpec::Preprocessing_Name(qopts.preprocessing)
            << (qopts.min_after_dequeue > 0
                    ? ", shuffle buffer of " + std::to_string(qopts.min_after_dequeue) + "+"
                    : "")
            << ")";
  return input;
}

// Whether the input pipeline's threads run at idle priority, from
// --input_priority (auto: cluster::ChooseInputPriority); logged. A model
// of rows reads them on the training thread: no pipeline, no priority.
StatusOr<bool> InputAtIdlePriority(const proto::ModelSpec& spec,
                                   const cluster::ClusterConfig& config, int compute_threads,
                                   const TowerChoice& towers) {
  PS_ASSIGN_OR_RETURN(const cluster::PriorityChoice choice,
                      cluster::ParsePriorityFlag("--input_priority", FLAGS_input_priority, [&] {
                        return cluster::ChooseInputPriority(
                            compute_threads, towers.devices != nn::TowerDevices::kCpu,
                            cluster::ReadCpuBudget(), config);
                      }));
  if (data::ReadsRows(spec)) return false;
  LOG(INFO) << config.task.ToString() << " reads its input at " << (choice.idle ? "idle" : "normal")
            << " priority: " << choice.why;
  return choice.idle;
}

// This worker's training input, its data kept in *data: a model of
// columns reads rows of its CSV input, any other images (or ids).
struct TrainingData {
  data::FeaturizedRows rows;
  data::ImageDataset images;
};
StatusOr<std::unique_ptr<data::BatchSource>> TrainingInput(const proto::ModelSpec& spec,
                                                           const nn::Model& model, int index,
                                                           const data::Shard& shard, int towers,
                                                           bool idle_priority, TrainingData* data) {
  if (!data::ReadsRows(spec)) {
    PS_ASSIGN_OR_RETURN(auto images,
                        ImageInput(spec, index, shard, towers, idle_priority, &data->images));
    return std::unique_ptr<data::BatchSource>(std::move(images));
  }
  PS_ASSIGN_OR_RETURN(data->rows, data::LoadFeaturizedRows(spec, FLAGS_data_dir, /*train=*/true,
                                                           nn::FeatureRequestOf(model)));
  PS_ASSIGN_OR_RETURN(auto source, data::FeatureBatchSource::Create(
                                       &data->rows, FLAGS_batch_size, shard,
                                       FLAGS_seed + static_cast<uint64_t>(index), FLAGS_epochs));
  LOG(INFO) << "worker:" << index << " reads " << source->examples_per_epoch()
            << " rows per epoch of " << FLAGS_data_dir << " (" << shard.ToString() << ")";
  return std::unique_ptr<data::BatchSource>(std::move(source));
}

}  // namespace pstrain

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
  auto spec = pstrain::nn::LoadSpecFromFlags(FLAGS_model);
  if (!spec.ok()) return pstrain::ExitWith(spec.status(), pstrain::kExitBadInput);
  auto model = pstrain::BuildModel(*spec, *towers);
  if (!model.ok()) return pstrain::ExitWith(model.status(), pstrain::kExitBadInput);
  LOG(INFO) << "worker:" << index << " runs " << FLAGS_model << " on " << (*model)->backend();
  auto sync = pstrain::SyncConfigFromFlags(config.spec.NumTasks("worker"));
  if (!sync.ok()) return pstrain::ExitWith(sync.status(), pstrain::kExitBadInput);
  auto optimizer = pstrain::PsOptimizerFromFlags(*spec, sync->enabled());
  if (!optimizer.ok()) return pstrain::ExitWith(optimizer.status(), pstrain::kExitBadInput);

  auto placement = pstrain::cluster::PlacementOptionsFromFlags();
  if (!placement.ok()) return pstrain::ExitWith(placement.status(), pstrain::kExitBadInput);
  auto layout = pstrain::PsFleet::LayoutOfModel(
      config.spec.NumTasks("ps"), **model, *pstrain::OptimizerSlotCount(*optimizer), *placement);
  if (!layout.ok()) return pstrain::ExitWith(layout.status(), pstrain::kExitBadInput);
  auto transport = pstrain::TransportFromFlags();
  if (!transport.ok()) return pstrain::ExitWith(transport.status(), pstrain::kExitBadInput);
  pstrain::PsConnections connections =
      pstrain::ConnectToPs(config.spec, *transport, &layout->variables);
  auto fleet = std::make_unique<pstrain::PsFleet>(
      std::move(connections.connections), std::move(*layout), std::move(connections.memory));

  // This worker's part of the data: a shard of the split, not the split.
  const pstrain::data::Shard shard{index, config.spec.NumTasks("worker")};
  pstrain::TrainingData data;
  auto input_idle = pstrain::InputAtIdlePriority(*spec, config, compute_threads, *towers);
  if (!input_idle.ok()) return pstrain::ExitWith(input_idle.status(), pstrain::kExitBadInput);
  auto input =
      pstrain::TrainingInput(*spec, **model, index, shard, towers->towers, *input_idle, &data);
  if (!input.ok()) return pstrain::ExitWith(input.status(), pstrain::kExitBadInput);
  return Train(index, model->get(), fleet.get(), input->get(), overlap->overlap, *spec,
               config.spec.NumTasks("worker"), *sync, &stop);
}
