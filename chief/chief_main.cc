// chief: the supervisor. Initializes every variable on the ps tasks, marks
// the model ready, waits for the workers, evaluates the final variables on
// the test set, writes them into the train dir and shuts the ps tasks down.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <chrono>
#include <filesystem>

#include "chief/chief_flags.h"
#include "chief/eval_metrics.h"
#include "chief/evaluation_thread.h"
#include "chief/http/http_server.h"
#include "chief/supervisor.h"
#include "chief/tf_names.h"
#include "chief/warm_start.h"
#include "cluster/cluster_flags.h"
#include "cluster/cpu_share_flags.h"
#include "cluster/placement_flags.h"
#include "core/stop_signals.h"
#include "core/task_main.h"
#include "core/tls.h"
#include "data/data_flags.h"
#include "data/dataset_loader.h"
#include "data/feature_batches.h"
#include "data/mnist_dataset.h"
#include "nn/compute_threads.h"
#include "nn/model.h"
#include "nn/model_flags.h"
#include "nn/model_spec.h"
#include "nn/wide_deep_model.h"
#include "ps/client/ps_fleet.h"
#include "ps/optimizer.h"
#include "ps/optimizer_flags.h"
#include "ps/rpc/ps_connections.h"
#include "ps/sync_flags.h"

namespace {

// The status page and its endpoints on --http_host:--http_port (null with
// --http_port=-1), showing `board`.
pstrain::StatusOr<std::unique_ptr<pstrain::HttpServer>> StartHttp(pstrain::MetricsBoard* board) {
  if (FLAGS_http_port < 0) return std::unique_ptr<pstrain::HttpServer>();
  PS_ASSIGN_OR_RETURN(auto http, pstrain::HttpServer::Start(FLAGS_http_host, FLAGS_http_port, board,
                                                            pstrain::TaskTls()));
  LOG(INFO) << "status page: " << (http->https() ? "https" : "http") << "://"
            << (FLAGS_http_host == "0.0.0.0" ? "127.0.0.1" : FLAGS_http_host) << ":" << http->port()
            << "/ (also /healthz, /metrics, /status)";
  return http;
}

// What the chief evaluates on: a model of columns on its CSV input's test
// rows; any other on the test images (and it summarizes training images).
struct EvalData {
  bool columns = false;
  pstrain::data::FeaturizedRows test_rows;
  pstrain::data::ImageDataset test, train;
};
pstrain::Status LoadEvalData(const pstrain::proto::ModelSpec& spec, const pstrain::nn::Model& model,
                             EvalData* data) {
  data->columns = pstrain::data::ReadsRows(spec);
  if (data->columns) {
    PS_ASSIGN_OR_RETURN(data->test_rows,
                        pstrain::data::LoadFeaturizedRows(spec, FLAGS_data_dir, /*train=*/false,
                                                          pstrain::nn::FeatureRequestOf(model)));
    return pstrain::OkStatus();
  }
  PS_ASSIGN_OR_RETURN(data->test,
                      pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "test"));
  PS_ASSIGN_OR_RETURN(data->train,
                      pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_data_format, "train"));
  return pstrain::OkStatus();
}

// Runs the job to its end; the chief's exit code.
int Supervise(pstrain::Supervisor* supervisor, const pstrain::StopNotice& stop) {
  pstrain::Status s = supervisor->Start();
  if (s.ok()) {
    s = supervisor->Monitor();
    if (s.code() == pstrain::Code::kFailedPrecondition) {
      // A worker failed, or never came: retrying the chief cannot mend it.
      supervisor->EndOnFailure(s);
      return pstrain::ExitWith(s, pstrain::kExitBadInput);
    }
  }
  if (s.ok()) s = supervisor->Finish();
  if (s.ok()) return pstrain::kExitDone;  // the job is done, whatever signal came since
  if (stop.requested()) {
    // A graceful stop before the end: save what training has reached (the
    // ps tasks keep it too) for the restarted chief.
    s = supervisor->SaveOnStop();
    // A failed save leaves the last checkpoint as it was; the stop is still
    // an eviction, retried like one.
    if (!s.ok()) LOG(ERROR) << "no checkpoint saved on stopping: " << s.ToString();
    return pstrain::ExitStopped(stop);
  }
  return pstrain::ExitWith(s, pstrain::kExitRetryable);
}

// The evaluation while training: a model and ps connections of its own, on
// a thread of its own beside the monitor loop (chief/evaluation_thread.h).
// Declared in the order they are made: the thread ends before what it uses.
struct WhileTraining {
  std::unique_ptr<pstrain::nn::Model> model;
  std::unique_ptr<pstrain::PsFleet> fleet;
  std::unique_ptr<pstrain::EvaluationThread> thread;
};
pstrain::Status StartEvaluationThread(const pstrain::cluster::ClusterConfig& config,
                                      const pstrain::PsFleet::Layout& layout, const EvalData& data,
                                      int compute_threads, pstrain::SupervisorOptions* options,
                                      WhileTraining* out) {
  PS_ASSIGN_OR_RETURN(pstrain::nn::LoadedModel loaded,
                      pstrain::nn::LoadModelFromFlags(FLAGS_model));
  out->model = std::move(loaded.model);
  out->fleet = std::make_unique<pstrain::PsFleet>(
      pstrain::ConnectToPs(config.spec, pstrain::PsClientOptions()).connections, layout);
  out->thread = std::make_unique<pstrain::EvaluationThread>(
      pstrain::StateEvaluation{out->model.get(), out->fleet.get(),
                               data.columns ? nullptr : &data.test, options->test_rows,
                               pstrain::ImageInputOf(loaded.spec),
                               options->eval_use_moving_averages},
      compute_threads, pstrain::cluster::EvaluateAtIdlePriorityFromFlagsOrDie(config),
      pstrain::EvaluationThread::MaxWaitingFor(*out->model));
  options->evaluation_thread = out->thread.get();
  return pstrain::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::StopNotice stop;
  pstrain::HandleStopSignals(&stop);
  pstrain::InitTaskMain(
      "the pstrain chief (supervisor).\n"
      "  chief --job=chief --task=0 --cluster_spec=cluster.json --train_dir=runs/x\n"
      "or, with no cluster flags, from TF_CONFIG as Kubeflow's TFJob sets it.",
      &argc, &argv);

  const auto config = pstrain::cluster::ClusterConfigFromFlagsOrDie("chief");
  const int compute_threads = pstrain::cluster::ComputeThreadsFromFlagsOrDie(config);
  pstrain::nn::SetComputeThreads(compute_threads);
  const int num_workers = config.spec.NumTasks("worker");
  auto loaded = pstrain::nn::LoadModelFromFlags(FLAGS_model);
  if (!loaded.ok()) return pstrain::ExitWith(loaded.status(), pstrain::kExitBadInput);
  const pstrain::proto::ModelSpec& spec = loaded->spec;
  pstrain::nn::Model& model = *loaded->model;
  auto options = pstrain::SupervisorOptionsFromFlags(spec, num_workers);
  if (!options.ok()) return pstrain::ExitWith(options.status(), pstrain::kExitBadInput);
  auto warm_start = pstrain::WarmStartFromFlags(model, options->init);
  if (!warm_start.ok()) return pstrain::ExitWith(warm_start.status(), pstrain::kExitBadInput);
  if (!warm_start->empty()) options->warm_start = &*warm_start;

  auto placement = pstrain::cluster::PlacementOptionsFromFlags();
  if (!placement.ok()) return pstrain::ExitWith(placement.status(), pstrain::kExitBadInput);
  auto layout = pstrain::PsFleet::LayoutOfModel(
      config.spec.NumTasks("ps"), model, *pstrain::OptimizerSlotCount(options->init.optimizer()),
      *placement);
  if (!layout.ok()) return pstrain::ExitWith(layout.status(), pstrain::kExitBadInput);
  pstrain::PsFleet fleet(pstrain::ConnectToPs(config.spec, pstrain::PsClientOptions()).connections,
                         *layout);
  EvalData data;
  const pstrain::Status loaded_data = LoadEvalData(spec, model, &data);
  if (!loaded_data.ok()) return pstrain::ExitWith(loaded_data, pstrain::kExitBadInput);
  if (data.columns) options->test_rows = &data.test_rows;
  std::error_code ec;
  std::filesystem::create_directories(FLAGS_train_dir, ec);
  if (ec) {
    return pstrain::ExitWith(
        pstrain::IoError("cannot create --train_dir " + FLAGS_train_dir + ": " + ec.message()),
        pstrain::kExitBadInput);
  }

  pstrain::MetricsBoard board;
  auto http = StartHttp(&board);
  if (!http.ok()) return pstrain::ExitWith(http.status(), pstrain::kExitBadInput);
  options->board = &board;
  options->loss_is_sum = pstrain::nn::SumsLossOverBatch(spec);
  options->input = pstrain::ImageInputOf(spec);
  WhileTraining evaluation;
  if (options->eval_secs > 0) {
    const pstrain::Status started =
        StartEvaluationThread(config, *layout, data, compute_threads, &*options, &evaluation);
    if (!started.ok()) return pstrain::ExitWith(started, pstrain::kExitBadInput);
  }
  pstrain::Supervisor supervisor(&model, &fleet, data.columns ? nullptr : &data.test,
                                 data.columns ? nullptr : &data.train, &stop, *options);
  return Supervise(&supervisor, stop);
}
