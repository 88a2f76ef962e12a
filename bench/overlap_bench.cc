// overlap_bench: the data-plane issue's item 3 measured. One worker's mnist
// step against one real ps_server process on loopback, beside the same step
// in one process, in the same run (docs/BENCHMARKS.md).
//
// Three ways to take a step, in turns for --rounds rounds of --steps steps:
//   local       LossAndGradients and a Nesterov momentum update in this
//               process (mnist_step_bench's step);
//   serial      the worker's own Trainer pulling every variable, computing,
//               and pushing every gradient, one after the other (what
//               --overlap_transfers=auto chooses where the worker's compute
//               threads take every CPU);
//   overlapped  the Trainer with its transfers under the layers: each layer
//               waits only for its variables, each gradient goes out as
//               backward produces it.
// The ps applies Nesterov momentum (lr 0.01, momentum 0.9), asynchronous,
// as the main job does. Prints each way's median seconds per step over the
// rounds and its ratio to local (the bar: 1.15 for the way the
// worker takes).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "bench/local_step.h"
#include "bench/ps_processes.h"
#include "cluster/placement.h"
#include "cluster/placement_flags.h"
#include "core/task_main.h"
#include "data/batch_source.h"
#include "nn/model.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/ps_connections.h"
#include "worker/trainer.h"

DEFINE_string(model, "mnist", "a built-in network, a ModelSpec file or keras:FILE.json");
DEFINE_int32(batch, 128, "images per step");
DEFINE_int32(steps, 40, "timed steps per round and way");
DEFINE_int32(rounds, 5, "rounds; each runs every way once, in turn");
DEFINE_int32(num_ps, 1, "ps_server processes");
DEFINE_string(ps_server, "",
              "Path of the ps_server binary; empty: <build>/ps/ps_server, found from this "
              "binary's path <build>/bench/overlap_bench");
DEFINE_string(ways, "local,serial,overlapped", "which ways to time, comma-separated (local first)");
DEFINE_bool(show_ps_output, false, "Copy the ps processes' log lines to stderr");

namespace pstrain {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

Status Run() {
  PS_ASSIGN_OR_RETURN(auto model, nn::CreateModel(FLAGS_model));
  const std::string dir =
      std::filesystem::temp_directory_path() / ("overlap_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  bench::PsProcesses ps;
  PS_RETURN_IF_ERROR(
      ps.Start(bench::PsServerPath(FLAGS_ps_server), FLAGS_num_ps, dir, FLAGS_show_ps_output));
  const cluster::ClusterSpec spec = bench::SpecFor(ps.ports(), 1);
  PS_ASSIGN_OR_RETURN(const cluster::PlacementOptions placement,
                      cluster::PlacementOptionsFromFlags());
  PS_ASSIGN_OR_RETURN(auto layout, PsFleet::LayoutOf(spec.NumTasks("ps"), model->variables(),
                                                     /*slots=*/1, placement));
  auto fleet = ConnectFleet(spec, std::move(layout), {}, /*trainer=*/true);
  PS_RETURN_IF_ERROR(fleet->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  std::vector<Tensor> initial;
  for (const nn::VariableSpec& spec : model->variables()) {
    initial.push_back(nn::InitialValue(spec, /*seed=*/1));
  }
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("Momentum");
  header.mutable_optimizer()->set_learning_rate(bench::kLearningRate);
  header.mutable_optimizer()->set_momentum(bench::kMomentum);
  header.mutable_optimizer()->set_use_nesterov(true);
  header.set_num_workers(1);
  PS_RETURN_IF_ERROR(fleet->InitVariables(initial, header));

  bench::RandomBatches input(*model, FLAGS_batch);
  data::Batch batch;
  bench::LocalStep one_process(model.get());

  // Each way runs `steps` steps.
  auto local = [&](int steps) -> Status {
    for (int i = 0; i < steps; ++i) {
      input.Next(&batch);
      PS_RETURN_IF_ERROR(one_process.Run(batch).status());
    }
    return OkStatus();
  };
  // The worker's own Trainer, its transfers overlapped with the layers or not.
  auto trainer_way = [&](bool overlap) {
    return [&, overlap](int steps) -> Status {
      PS_ASSIGN_OR_RETURN(proto::StatusResponse status, fleet->CoordinatorStatus());
      TrainerOptions options;
      options.max_steps = status.global_step() + steps;
      options.log_frequency = VLOG_IS_ON(1) ? 10 : 0;
      options.overlap = overlap;
      Trainer trainer(model.get(), fleet.get(), &input, nullptr, nullptr, options);
      return trainer.Run().status();
    };
  };
  auto serial = trainer_way(false);
  auto overlapped = trainer_way(true);
  std::vector<std::pair<std::string, std::function<Status(int)>>> ways;
  for (const auto& [name, way] : std::vector<std::pair<std::string, std::function<Status(int)>>>{
           {"local", local}, {"serial", serial}, {"overlapped", overlapped}}) {
    if (("," + FLAGS_ways + ",").find("," + name + ",") != std::string::npos) {
      ways.emplace_back(name, way);
    }
  }
  if (ways.empty()) return InvalidArgument("--ways names none of local, serial, overlapped");
  for (const auto& [name, way] : ways) PS_RETURN_IF_ERROR(way(5).Annotate(name + " warm-up"));

  std::map<std::string, std::vector<double>> per_step, worker_cpu, ps_cpu;
  for (int r = 0; r < FLAGS_rounds; ++r) {
    for (const auto& [name, way] : ways) {
      const bench::CpuSample c0 = bench::SampleCpu();
      PS_RETURN_IF_ERROR(way(FLAGS_steps).Annotate(name));
      const bench::CpuSample c1 = bench::SampleCpu();
      per_step[name].push_back(std::chrono::duration<double>(c1.when - c0.when).count() /
                               FLAGS_steps);
      worker_cpu[name].push_back((c1.self_sec - c0.self_sec) / FLAGS_steps);
      ps_cpu[name].push_back((c1.ps_sec - c0.ps_sec) / FLAGS_steps);
    }
  }
  const double base = per_step.count("local") ? Median(per_step["local"]) : 0;
  std::printf("%s, batch %d, %d ps, %d rounds of %d steps (medians over the rounds)\n",
              FLAGS_model.c_str(), FLAGS_batch, FLAGS_num_ps, FLAGS_rounds, FLAGS_steps);
  std::printf("  %-10s %10s %16s %20s %16s\n", "way", "s/step", "ratio to local",
              "worker CPU ms/step", "ps CPU ms/step");
  for (const auto& [name, way] : ways) {
    const double s = Median(per_step[name]);
    std::printf("  %-10s %10.4f %16.3f %20.1f %16.1f\n", name.c_str(), s, base > 0 ? s / base : 0,
                1e3 * Median(worker_cpu[name]), 1e3 * Median(ps_cpu[name]));
  }
  ps.Stop();
  std::filesystem::remove_all(dir);
  return OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "overlap_bench [--model=mnist] [--steps=40] [--rounds=5]\n"
      "One worker's step against real ps_server processes on loopback, serial and overlapped,\n"
      "beside the same step in one process: median seconds per step and the ratios.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
