// scale_bench: many workers against real ps_server processes, and what the
// ps tasks pay for them.
//
// For each W in --workers_list it starts --ps fresh ps_server processes on
// loopback (--transport=tensor: with their tensor channel; grpc: without,
// so tensors go over gRPC), initializes a null model on them (--vars
// variables of --var_floats float32 each, GradientDescent), asynchronous or,
// with --sync, sync replicas with replicas_to_aggregate = total = W, and
// runs W simulated workers as threads of this process. Each has its own
// PsFleet, reaching the ps tasks through an address of its own
// (127.0.X.Y; the ps listens on every loopback address) so that it has its
// own connections as a worker process would, a HeartbeatSender to ps:0 every
// second as a worker has, and a loop of pull and push (sync: the pull waits
// for the step after the one it pushed to).
//
// Per W it prints: the seconds until every worker has had a push applied;
// steps/s over --seconds; per ps (the largest over the ps tasks) its
// threads, open descriptors and resident memory at the end of the window,
// and that memory per worker; the ps tasks' CPU ms per applied gradient;
// and the calls that failed, by code (0 is the goal). A progress line while
// the workers start.
//
//   build/bench/scale_bench --ps=4 --workers_list=10,100,300 [--sync] [--transport=grpc]
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/ps_processes.h"
#include "cluster/placement.h"
#include "core/status.h"
#include "core/task_main.h"
#include "core/tensor.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/ps_connections.h"
#include "worker/heartbeat_sender.h"

DEFINE_int32(ps, 4, "ps tasks");
DEFINE_string(workers_list, "10,100,300", "Numbers of simulated workers W, comma-separated");
DEFINE_bool(sync, false, "Sync replicas, replicas_to_aggregate = total_num_replicas = W");
DEFINE_string(transport, "tensor",
              "tensor: the ps tasks' tensor channel (over TCP); grpc: no tensor channel");
DEFINE_int32(vars, 4, "Variables of the null model");
DEFINE_int32(var_floats, 256, "float32 elements of each variable");
DEFINE_double(seconds, 10, "Measured window per W, after every worker has stepped");
DEFINE_double(start_timeout_secs, 300, "Give up when the workers have not all stepped by then");
DEFINE_string(ps_server, "", "Path of ps_server; empty: <build>/ps/ps_server");

namespace pstrain {
namespace {

using bench::Clock;

constexpr auto kPullWait = std::chrono::milliseconds(1000);

// The ps tasks at 127.0.X.Y, an address of worker w's own.
cluster::ClusterSpec SpecForWorker(const std::vector<int>& ports, int w) {
  const std::string host =
      "127.0." + std::to_string(1 + w / 250) + "." + std::to_string(2 + w % 250);
  cluster::ClusterSpec spec;
  for (int port : ports) spec.jobs["ps"].push_back(host + ":" + std::to_string(port));
  return spec;
}

// What every worker thread adds up.
struct Shared {
  std::atomic<bool> stop{false};
  std::atomic<int> stepped{0};     // workers with a push applied
  std::atomic<int64_t> pushes{0};  // pushes applied, all workers
  std::mutex mu;
  std::map<std::string, int64_t> errors;  // failed calls by code
  void Count(const Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    ++errors[CodeName(s.code())];
  }
};

class SimulatedWorker {
 public:
  SimulatedWorker(int index, const std::vector<int>& ports, const PsFleet::Layout& layout,
                  Shared* shared)
      : index_(index),
        fleet_(ConnectFleet(SpecForWorker(ports, index), layout, PsClientOptions(),
                            /*trainer=*/true)),
        shared_(shared) {
    grads_ = fleet_->VariableBuffers();
    for (Tensor& g : grads_) g.Fill(1.0f / 1024);
  }

  void Run() {
    Status ready = fleet_->WaitForPs(/*require_ready=*/true, nullptr, std::chrono::seconds(300));
    if (!ready.ok()) {
      shared_->Count(ready);
      return;
    }
    HeartbeatSender heartbeat(fleet_->client(0), index_, std::chrono::seconds(1));
    std::vector<Tensor> params = fleet_->VariableBuffers();
    PsFleet::PsSteps steps;
    int64_t min_step = 0, local_step = 0;
    bool stepped = false;
    while (!shared_->stop.load()) {
      Status pulled = fleet_->PullVariables(&params, &steps, FLAGS_sync ? min_step : 0, kPullWait);
      if (pulled.code() == Code::kDeadlineExceeded && FLAGS_sync) continue;  // the step waits
      if (!pulled.ok()) {
        shared_->Count(pulled);
        continue;
      }
      auto pushed = fleet_->PushGradients(grads_, index_, ++local_step, steps, FLAGS_sync);
      if (!pushed.ok()) {
        shared_->Count(pushed.status());
        continue;
      }
      heartbeat.set_local_step(local_step);
      shared_->pushes.fetch_add(1);
      if (!stepped) {
        stepped = true;
        shared_->stepped.fetch_add(1);
      }
      min_step = *std::min_element(steps.begin(), steps.end()) + 1;
    }
  }

 private:
  const int index_;
  std::unique_ptr<PsFleet> fleet_;
  Shared* const shared_;
  std::vector<Tensor> grads_;
};

struct Point {
  double start_secs = 0;  // until every worker had a push applied
  double steps_per_sec = 0;
  double pushes_per_sec = 0;
  bench::ProcessResources worst;  // per field, the largest over the ps tasks
  double ps_cpu_ms_per_push = 0;
  std::map<std::string, int64_t> errors;
};

StatusOr<Point> RunPoint(const std::string& binary, int w, const std::string& dir) {
  bench::PsProcesses procs;
  std::vector<std::string> extra;
  if (FLAGS_transport == "grpc") extra.push_back("--tensor_port=-1");
  PS_RETURN_IF_ERROR(procs.Start(binary, FLAGS_ps, dir, /*show_output=*/false, extra));
  std::vector<cluster::VariableInfo> vars;
  for (int v = 0; v < FLAGS_vars; ++v) {
    vars.push_back({"null/v" + std::to_string(v), {FLAGS_var_floats}, /*num_slots=*/0});
  }
  PS_ASSIGN_OR_RETURN(
      cluster::Placement placement,
      cluster::ComputePlacement(vars, FLAGS_ps, cluster::PlacementStrategy::kGreedy, 1 << 20));
  const PsFleet::Layout layout{vars, placement, {}, {}};
  auto control = ConnectFleet(bench::SpecFor(procs.ports(), 1), layout);
  PS_RETURN_IF_ERROR(control->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  std::vector<Tensor> init;
  for (const auto& v : vars) init.emplace_back(v.shape);
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(0.01f);
  header.set_heartbeat_timeout_secs(30);
  if (FLAGS_sync) {
    header.mutable_sync()->set_enabled(true);
    header.mutable_sync()->set_replicas_to_aggregate(w);
    header.mutable_sync()->set_total_num_replicas(w);
  }
  PS_RETURN_IF_ERROR(control->InitVariables(init, header));

  Shared shared;
  std::vector<std::unique_ptr<SimulatedWorker>> workers;
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int i = 0; i < w; ++i) {
    workers.push_back(std::make_unique<SimulatedWorker>(i, procs.ports(), layout, &shared));
    threads.emplace_back([&worker = *workers.back()] { worker.Run(); });
  }
  Point p;
  auto last_line = start;
  while (shared.stepped.load() < w) {
    const auto now = Clock::now();
    if (now - start > std::chrono::duration<double>(FLAGS_start_timeout_secs)) break;
    if (now - last_line >= std::chrono::seconds(2)) {
      std::fprintf(stderr, "  W=%d: %d of %d workers stepping after %.0f s\n", w,
                   shared.stepped.load(), w, std::chrono::duration<double>(now - start).count());
      last_line = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  p.start_secs = std::chrono::duration<double>(Clock::now() - start).count();
  Status outcome = shared.stepped.load() == w
                       ? OkStatus()
                       : DeadlineExceeded(std::to_string(w - shared.stepped.load()) + " of " +
                                          std::to_string(w) + " workers never stepped");
  if (outcome.ok()) {
    auto step0 = control->CoordinatorStatus();
    const int64_t pushes0 = shared.pushes.load();
    const bench::CpuSample c0 = bench::SampleCpu();
    std::this_thread::sleep_for(std::chrono::duration<double>(FLAGS_seconds));
    auto step1 = control->CoordinatorStatus();
    const int64_t pushes = shared.pushes.load() - pushes0;
    const bench::CpuSample c1 = bench::SampleCpu();
    const double secs = std::chrono::duration<double>(c1.when - c0.when).count();
    if (step0.ok() && step1.ok()) {
      p.steps_per_sec = (step1->global_step() - step0->global_step()) / secs;
    }
    p.pushes_per_sec = pushes / secs;
    p.ps_cpu_ms_per_push = pushes > 0 ? 1e3 * (c1.ps_sec - c0.ps_sec) / pushes : 0;
    for (int pid : procs.pids()) {
      const bench::ProcessResources r = bench::ReadProcessResources(pid);
      p.worst.threads = std::max(p.worst.threads, r.threads);
      p.worst.rss_bytes = std::max(p.worst.rss_bytes, r.rss_bytes);
      p.worst.descriptors = std::max(p.worst.descriptors, r.descriptors);
    }
  }
  shared.stop.store(true);
  for (auto& t : threads) t.join();
  workers.clear();
  p.errors = shared.errors;
  Status down = control->ShutdownAll("scale_bench done");
  if (outcome.ok() && !down.ok()) outcome = down;
  if (!procs.WaitForExit(std::chrono::seconds(30)) && outcome.ok()) {
    outcome = Internal("the ps processes did not exit after Shutdown");
  }
  procs.Stop();
  if (!outcome.ok()) return outcome;
  return p;
}

int Main() {
  if (FLAGS_transport != "tensor" && FLAGS_transport != "grpc") {
    std::fprintf(stderr, "scale_bench: --transport=%s: tensor or grpc\n", FLAGS_transport.c_str());
    return 1;
  }
  const std::string binary = bench::PsServerPath(FLAGS_ps_server);
  std::printf(
      "scale_bench: %d ps, %s, %s, null model of %d x %d float32; %.0f s window; %ld cores, "
      "load average %.2f\n",
      FLAGS_ps, FLAGS_sync ? "sync (R = N = W)" : "async", FLAGS_transport.c_str(), FLAGS_vars,
      FLAGS_var_floats, FLAGS_seconds, sysconf(_SC_NPROCESSORS_ONLN), bench::LoadAverage1());
  std::printf("%6s %8s %9s %9s %8s %6s %8s %9s %11s  %s\n", "W", "start_s", "steps/s", "pushes/s",
              "threads", "fds", "rss_MB", "KB/worker", "ps_ms/push", "failed calls");
  std::fflush(stdout);
  int exit_code = 0;
  auto workers_list = bench::ParseIntList("workers_list", FLAGS_workers_list, 1, 60000);
  if (!workers_list.ok()) {
    std::fprintf(stderr, "scale_bench: %s\n", workers_list.status().message().c_str());
    return 1;
  }
  for (int w : *workers_list) {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("pstrain_scale_bench_" + std::to_string(getpid())))
                                .string();
    std::filesystem::create_directories(dir);
    auto p = RunPoint(binary, w, dir);
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (!p.ok()) {
      std::printf("%6d failed: %s\n", w, p.status().ToString().c_str());
      exit_code = 1;
      continue;
    }
    std::string errors;
    for (const auto& [code, n] : p->errors) {
      errors += (errors.empty() ? "" : ", ") + code + " " + std::to_string(n);
    }
    std::printf("%6d %8.1f %9.1f %9.1f %8d %6d %8.1f %9.1f %11.3f  %s\n", w, p->start_secs,
                p->steps_per_sec, p->pushes_per_sec, p->worst.threads, p->worst.descriptors,
                p->worst.rss_bytes / 1e6, p->worst.rss_bytes / 1e3 / w, p->ps_cpu_ms_per_push,
                errors.empty() ? "none" : errors.c_str());
    std::fflush(stdout);
  }
  return exit_code;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "many simulated workers against real ps_server processes, and what the ps tasks pay "
      "for them.\n"
      "  scale_bench --ps=4 --workers_list=10,100,300 [--sync] [--transport=grpc]",
      &argc, &argv);
  return pstrain::Main();
}
