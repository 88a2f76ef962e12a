// sync_bench: the synchronous-replicas machinery alone (docs/BENCHMARKS.md).
//
// For every P in --ps_list it starts P real ps_server processes on loopback;
// for every K in --workers_list it initializes them with the cifar10 network's
// ten variables (docs/MODELS.md, 1,068,298 float32 parameters; GradientDescent) in
// sync mode with replicas_to_aggregate = total_num_replicas = K, and runs K
// simulated workers as threads of this process, each with its own PsFleet.
// A worker loops as worker/trainer.cc does in sync mode: pull (min_step = the
// smallest pulled step + 1), sleep --delay_ms instead of computing, push
// constant gradients computed at the pulled steps. After a warm-up, the
// global step on ps 0 is read at the start and the end of a --seconds window.
//
// Efficiency: each step consumes K gradients, so the examples-equivalent
// throughput at K is steps/s(K) * K (gradients applied per second), and
//   efficiency(K) = steps/s(K) * K / (K * steps/s(1)) = steps/s(K) / steps/s(1)
// with the same number of ps tasks: 1.0 means K workers finish K times the
// work of one in the same time.
//
// Each worker connects to the ps tasks through its own loopback address
// (127.0.0.2, 127.0.0.3, ...; the ps listens on 0.0.0.0), so that, as with
// real worker processes, every worker has its own TCP connection: gRPC would
// otherwise share one connection per ps between channels with equal
// arguments (--separate_connections=false measures that).
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <poll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/ps_processes.h"
#include "cluster/placement.h"
#include "cluster/placement_flags.h"
#include "core/status.h"
#include "core/task_main.h"
#include "core/tensor.h"
#include "deploy/local/task_process.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/ps_connections.h"

DEFINE_double(seconds, 10, "Measured wall time per configuration");
DEFINE_double(warmup_seconds, 2, "Warm-up per configuration before the measured window");
DEFINE_string(ps_list, "1,2", "Numbers of ps tasks to run, comma-separated");
DEFINE_string(workers_list, "1,2,4,8,16", "Numbers of simulated workers K, comma-separated");
DEFINE_int32(delay_ms, 50, "Simulated compute time per step (a sleep), ms");
DEFINE_string(ps_server, "",
              "Path of the ps_server binary; empty: <build>/ps/ps_server, found from this "
              "binary's path <build>/bench/sync_bench");
DEFINE_bool(separate_connections, true,
            "Give every simulated worker its own loopback address (127.0.0.2, ...) and so its "
            "own TCP connection to each ps, as separate worker processes would have");
DEFINE_bool(show_ps_output, false, "Copy the ps processes' log lines to stderr");
DEFINE_string(transport, "channel",
              "How tensors travel: channel (the ps's tensor channel, the default) or grpc (the "
              "ps started with --tensor_port=-1)");
DEFINE_bool(shared_memory, true,
            "Let the tensor channel carry the tensors through shared memory (the ps tasks are "
            "on this host); false: its socket alone");

namespace pstrain {
namespace {

using bench::Clock;
using bench::CpuSample;
using bench::LoadAverage1;
using bench::PsProcesses;
using bench::SampleCpu;
using bench::SpecFor;

constexpr float kLearningRate = 0.1f;     // cifar10's
constexpr float kGradient = 1.0f / 1024;  // every gradient element
constexpr auto kPullWait = std::chrono::milliseconds(1000);

// The cifar10 network's trainable variables (docs/MODELS.md), in model order.
std::vector<std::pair<std::string, Shape>> Cifar10Variables() {
  return {{"conv1/weights", {5, 5, 3, 64}},      {"conv1/biases", {64}},
          {"conv2/weights", {5, 5, 64, 64}},     {"conv2/biases", {64}},
          {"local3/weights", {2304, 384}},       {"local3/biases", {384}},
          {"local4/weights", {384, 192}},        {"local4/biases", {192}},
          {"softmax_linear/weights", {192, 10}}, {"softmax_linear/biases", {10}}};
}

// ---------------------------------------------------------------------------
// One configuration.

struct WorkerStats {
  int64_t iterations = 0;  // completed pull + delay + push, in the window
  double pull_sec = 0, delay_sec = 0, push_sec = 0;
  int64_t stale = 0;
  int64_t retries = 0;  // calls repeated after UNAVAILABLE (whole run)
  Status error;
};

struct Result {
  int num_ps = 0, workers = 0;
  double steps_per_sec = 0, window_sec = 0;
  int64_t steps = 0;
  double pull_ms = 0, delay_ms = 0, push_ms = 0;
  double cpu_bench = 0, cpu_ps = 0, machine_busy = 0, load1 = 0;
  int64_t stale = 0, retries = 0;
  double efficiency = -1;
};

PsClientOptions SharedMemoryOption() {
  PsClientOptions options;
  options.shared_memory = FLAGS_shared_memory;
  return options;
}

class Worker {
 public:
  Worker(int index, const cluster::ClusterSpec& spec,
         const std::vector<cluster::VariableInfo>& vars, const cluster::Placement& placement,
         const std::atomic<bool>* stop, const std::atomic<bool>* measuring)
      : index_(index),
        fleet_(
            ConnectFleet(spec, {vars, placement, {}, {}}, SharedMemoryOption(), /*trainer=*/true)),
        stop_(stop),
        measuring_(measuring) {
    // Where a worker's Trainer keeps them (in its arena, through shared memory).
    grads_ = fleet_->VariableBuffers();
    for (Tensor& g : grads_) g.Fill(kGradient);
  }

  void Run() {
    // Connects to every ps before the first step (not timed).
    Status ready = fleet_->WaitForPs(/*require_ready=*/true, nullptr, std::chrono::seconds(30));
    if (!ready.ok()) {
      stats_.error = ready;
      return;
    }
    int64_t min_step = 0, local_step = 0;
    std::vector<Tensor> params = fleet_->VariableBuffers();
    PsFleet::PsSteps steps;
    while (!stop_->load()) {
      const auto t0 = Clock::now();
      Status s = fleet_->PullVariables(&params, &steps, min_step, kPullWait);
      if (s.code() == Code::kDeadlineExceeded) continue;  // re-checks stop_
      if (!Retry(s)) return;
      if (!s.ok()) continue;
      const auto t1 = Clock::now();
      std::this_thread::sleep_for(std::chrono::milliseconds(FLAGS_delay_ms));
      const auto t2 = Clock::now();
      ++local_step;
      StatusOr<PsFleet::PushResult> pushed = Unavailable("not pushed yet");
      for (;;) {
        pushed = fleet_->PushGradients(grads_, index_, local_step, steps, /*sync=*/true);
        if (!Retry(pushed.status())) return;
        if (pushed.ok()) break;
      }
      const auto t3 = Clock::now();
      min_step = *std::min_element(steps.begin(), steps.end()) + 1;
      if (measuring_->load()) {
        ++stats_.iterations;
        stats_.pull_sec += std::chrono::duration<double>(t1 - t0).count();
        stats_.delay_sec += std::chrono::duration<double>(t2 - t1).count();
        stats_.push_sec += std::chrono::duration<double>(t3 - t2).count();
        if (pushed->any(proto::STALE)) ++stats_.stale;
      }
    }
  }

  const WorkerStats& stats() const { return stats_; }

 private:
  // True to go on: s is OK, or a transient UNAVAILABLE (a connection lost
  // or refused on a loaded machine; the call is then repeated, as a worker
  // would, and counted; a repeated push that had in fact arrived would show
  // as a stale gradient later). False, with the error kept, otherwise.
  bool Retry(const Status& s) {
    if (s.ok()) return true;
    if (s.code() == Code::kUnavailable && stats_.retries < 20) {
      ++stats_.retries;
      LOG(WARNING) << "worker:" << index_ << " retrying after " << s.ToString();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return true;
    }
    stats_.error = s;
    return false;
  }

  const int index_;
  std::unique_ptr<PsFleet> fleet_;
  const std::atomic<bool>* stop_;
  const std::atomic<bool>* measuring_;
  std::vector<Tensor> grads_;
  WorkerStats stats_;
};

StatusOr<int64_t> GlobalStep(PsFleet* control) {
  PS_ASSIGN_OR_RETURN(proto::StatusResponse st, control->CoordinatorStatus());
  return st.global_step();
}

// Checks that every step was applied once: each variable's first element is
// -lr * g * (its ps's step), and the ps steps agree within one.
Status CheckValues(PsFleet* control, const std::vector<cluster::VariableInfo>& vars) {
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_RETURN_IF_ERROR(control->PullVariables(&values, &steps));
  const auto [lo, hi] = std::minmax_element(steps.begin(), steps.end());
  if (*hi - *lo > 1) {
    return Internal("ps steps disagree by more than one: " + std::to_string(*lo) + " .. " +
                    std::to_string(*hi));
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    const int ps = control->placement().ShardsOfVariable(vars[i].name)[0]->ps;
    const double want = -static_cast<double>(kLearningRate) * kGradient * steps[ps];
    const double got = values[i][0];
    if (std::fabs(got - want) > 1e-3 * std::fabs(want) + 1e-6) {
      return Internal(vars[i].name + "[0] is " + std::to_string(got) + ", expected " +
                      std::to_string(want) + " after " + std::to_string(steps[ps]) + " steps");
    }
  }
  return OkStatus();
}

StatusOr<Result> RunConfig(PsFleet* control, const std::vector<int>& ports,
                           const std::vector<cluster::VariableInfo>& vars,
                           const cluster::Placement& placement, int num_ps, int k) {
  std::vector<Tensor> init;
  for (const auto& v : vars) init.emplace_back(v.shape);  // zeros
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(kLearningRate);
  header.set_global_step(0);
  header.mutable_sync()->set_enabled(true);
  header.mutable_sync()->set_replicas_to_aggregate(k);
  header.mutable_sync()->set_total_num_replicas(k);
  header.set_heartbeat_timeout_secs(10);
  PS_RETURN_IF_ERROR(control->InitVariables(init, header));

  std::atomic<bool> stop{false}, measuring{false};
  std::vector<std::unique_ptr<Worker>> workers;
  for (int w = 0; w < k; ++w) {
    const int host = FLAGS_separate_connections ? 2 + w : 1;
    workers.push_back(
        std::make_unique<Worker>(w, SpecFor(ports, host), vars, placement, &stop, &measuring));
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->Run(); });

  auto sleep_secs = [](double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); };
  sleep_secs(FLAGS_warmup_seconds);
  Result r;
  r.num_ps = num_ps;
  r.workers = k;
  auto s0 = GlobalStep(control);
  const CpuSample c0 = SampleCpu();
  measuring.store(true);
  sleep_secs(FLAGS_seconds);
  auto s1 = GlobalStep(control);
  const CpuSample c1 = SampleCpu();
  measuring.store(false);
  stop.store(true);
  for (auto& t : threads) t.join();
  if (!s0.ok()) return s0.status();
  if (!s1.ok()) return s1.status();
  for (auto& w : workers) {
    if (!w->stats().error.ok()) return w->stats().error;
  }
  PS_RETURN_IF_ERROR(CheckValues(control, vars));

  r.window_sec = std::chrono::duration<double>(c1.when - c0.when).count();
  r.steps = *s1 - *s0;
  r.steps_per_sec = r.steps / r.window_sec;
  int64_t iters = 0;
  double pull = 0, delay = 0, push = 0;
  for (auto& w : workers) {
    iters += w->stats().iterations;
    pull += w->stats().pull_sec;
    delay += w->stats().delay_sec;
    push += w->stats().push_sec;
    r.stale += w->stats().stale;
    r.retries += w->stats().retries;
  }
  if (iters > 0) {
    r.pull_ms = 1e3 * pull / iters;
    r.delay_ms = 1e3 * delay / iters;
    r.push_ms = 1e3 * push / iters;
  }
  r.cpu_bench = (c1.self_sec - c0.self_sec) / r.window_sec;
  r.cpu_ps = (c1.ps_sec - c0.ps_sec) / r.window_sec;
  const double total = static_cast<double>(c1.total - c0.total);
  r.machine_busy = total > 0 ? static_cast<double>(c1.busy - c0.busy) / total : 0;
  r.load1 = LoadAverage1();
  return r;
}

std::string UtcNow() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

int Main() {
  if (FLAGS_transport != "channel" && FLAGS_transport != "grpc") {
    std::fprintf(stderr, "--transport=%s: channel or grpc\n", FLAGS_transport.c_str());
    return 2;
  }
  auto ps_list = bench::ParseIntList("ps_list", FLAGS_ps_list, 1, 250);
  auto workers_list = bench::ParseIntList("workers_list", FLAGS_workers_list, 1, 250);
  for (const auto* list : {&ps_list, &workers_list}) {
    if (!list->ok()) {
      std::fprintf(stderr, "sync_bench: %s\n", list->status().message().c_str());
      return 2;
    }
  }
  const std::string binary = bench::PsServerPath(FLAGS_ps_server);
  if (::access(binary.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "sync_bench: no ps_server at %s (build it, or pass --ps_server)\n",
                 binary.c_str());
    return 2;
  }
  auto strategy = cluster::ParsePlacementStrategy(FLAGS_placement);
  if (!strategy.ok()) {
    std::fprintf(stderr, "sync_bench: %s\n", strategy.status().ToString().c_str());
    return 2;
  }
  std::vector<cluster::VariableInfo> vars;
  int64_t params = 0;
  for (const auto& [name, shape] : Cifar10Variables()) {
    vars.push_back({name, shape, /*num_slots=*/0});  // GradientDescent has no slots
    params += NumElements(shape);
  }
  const double mb = params * 4 / 1e6;
  std::printf(
      "sync_bench: %lld float32 parameters (%.2f MB) in %zu variables (cifar10), "
      "GradientDescent, sync replicas R = N = K; %d ms delay per step; %.0f s "
      "warm-up, %.0f s measured per configuration; %s connections; tensors over %s; %ld cores; "
      "started %s, load average %.2f\n",
      static_cast<long long>(params), mb, vars.size(), FLAGS_delay_ms, FLAGS_warmup_seconds,
      FLAGS_seconds, FLAGS_separate_connections ? "separate per-worker" : "shared",
      FLAGS_transport == "grpc" ? "gRPC" : "the tensor channel", sysconf(_SC_NPROCESSORS_ONLN),
      UtcNow().c_str(), LoadAverage1());
  std::printf(
      "efficiency(K) = steps/s(K) * K / (K * steps/s(1)) = steps/s(K) / steps/s(1), "
      "same number of ps tasks (throughput = gradients applied per second = steps/s * "
      "K)\n");
  std::printf(
      "pull/delay/push: mean ms per worker step (pull includes waiting for the step "
      "to complete); MB/s: payload pulled + pushed; cpu: cores used by this process "
      "(workers) and the ps processes; ms/g: those CPU times per gradient (one pull + one push of "
      "the whole model); busy: fraction of all the machine's cores busy (any process); "
      "load: 1-minute load average\n");
  std::printf("%3s %3s %8s %8s %6s %8s %8s %6s %8s %6s %6s %6s %7s %7s %5s %5s\n", "ps", "K",
              "steps/s", "grads/s", "eff", "step_ms", "pull_ms", "delay", "push_ms", "MB/s",
              "cpu_w", "cpu_ps", "ms/g_w", "ms/g_ps", "busy", "load");
  std::fflush(stdout);

  std::vector<Result> results;
  int exit_code = 0;
  for (int num_ps : *ps_list) {
    const std::string dir =
        (std::filesystem::temp_directory_path() /
         ("pstrain_sync_bench_" + std::to_string(getpid()) + "_" + std::to_string(num_ps)))
            .string();
    std::filesystem::create_directories(dir);
    PsProcesses procs;
    // Workers dialing their own loopback addresses reach a ps listening
    // on every address.
    Status s = procs.Start(binary, num_ps, dir, FLAGS_show_ps_output,
                           FLAGS_transport == "grpc" ? std::vector<std::string>{"--tensor_port=-1"}
                                                     : std::vector<std::string>{},
                           FLAGS_separate_connections ? "0.0.0.0" : "127.0.0.1");
    auto placement = cluster::ComputePlacement(vars, num_ps, *strategy, FLAGS_min_slice_bytes);
    if (!placement.ok()) s = placement.status();
    if (placement.ok() && num_ps > 1) {
      std::string line = "    placement (" + FLAGS_placement + ", min_slice_bytes " +
                         std::to_string(FLAGS_min_slice_bytes) + "):";
      for (int ps = 0; ps < num_ps; ++ps) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), " ps:%d %.2f MB in %zu shards;", ps,
                      placement->bytes_per_ps[ps] / 1e6, placement->ShardsOnPs(ps).size());
        line += buf;
      }
      std::printf("%s\n", line.c_str());
    }
    std::unique_ptr<PsFleet> control;
    if (s.ok()) {
      control = ConnectFleet(SpecFor(procs.ports(), 1), {vars, *placement, {}, {}});
      s = control->WaitForPs(false, nullptr, std::chrono::seconds(30));
    }
    double base = -1;
    for (int k : *workers_list) {
      if (!s.ok()) break;
      auto r = RunConfig(control.get(), procs.ports(), vars, *placement, num_ps, k);
      if (!r.ok()) {
        s = r.status().Annotate("ps=" + std::to_string(num_ps) + " K=" + std::to_string(k));
        break;
      }
      if (k == 1) base = r->steps_per_sec;
      if (base > 0) r->efficiency = r->steps_per_sec / base;
      char eff[16] = "-";
      if (r->efficiency >= 0) std::snprintf(eff, sizeof(eff), "%.3f", r->efficiency);
      const double grads_per_sec = r->steps_per_sec * k;
      const double per_grad = grads_per_sec > 0 ? 1e3 / grads_per_sec : 0.0;
      std::printf(
          "%3d %3d %8.2f %8.1f %6s %8.1f %8.1f %6.1f %8.1f %6.0f %6.2f %6.2f %7.1f %7.1f %5.2f "
          "%5.2f\n",
          num_ps, k, r->steps_per_sec, grads_per_sec, eff,
          r->steps_per_sec > 0 ? 1e3 / r->steps_per_sec : 0.0, r->pull_ms, r->delay_ms, r->push_ms,
          grads_per_sec * 2 * mb, r->cpu_bench, r->cpu_ps, r->cpu_bench * per_grad,
          r->cpu_ps * per_grad, r->machine_busy, r->load1);
      if (r->retries > 0) {
        std::printf("    note: %lld calls repeated after UNAVAILABLE\n",
                    static_cast<long long>(r->retries));
      }
      if (r->stale > 0) {
        std::printf("    warning: %lld stale gradients in the window\n",
                    static_cast<long long>(r->stale));
      }
      std::fflush(stdout);
      results.push_back(*r);
    }
    if (control) {
      Status down = control->ShutdownAll("sync_bench done");
      if (s.ok() && !down.ok()) s = down;
    }
    if (!procs.WaitForExit(std::chrono::seconds(20)) && s.ok()) {
      s = Internal("the ps processes did not exit after Shutdown");
    }
    if (!s.ok()) {
      std::fprintf(stderr, "sync_bench: %d ps: %s\nps processes: %s\nps output (tail):\n%s\n",
                   num_ps, s.ToString().c_str(), procs.ExitDescriptions().c_str(),
                   procs.Output()
                       .substr(procs.Output().size() > 4000 ? procs.Output().size() - 4000 : 0)
                       .c_str());
      exit_code = 1;
    }
    procs.Stop();
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }

  nlohmann::json j;
  j["benchmark"] = "sync_bench";
  j["date"] = UtcNow();
  j["parameters"] = params;
  j["delay_ms"] = FLAGS_delay_ms;
  j["seconds"] = FLAGS_seconds;
  j["warmup_seconds"] = FLAGS_warmup_seconds;
  j["separate_connections"] = FLAGS_separate_connections;
  j["efficiency_definition"] =
      "steps/s(K) * K / (K * steps/s(1)) = steps/s(K) / steps/s(1), same number of ps tasks";
  nlohmann::json rows = nlohmann::json::array();
  const Result* target = nullptr;
  for (const Result& r : results) {
    nlohmann::json row;
    row["ps"] = r.num_ps;
    row["workers"] = r.workers;
    row["steps"] = r.steps;
    row["window_sec"] = r.window_sec;
    row["steps_per_sec"] = r.steps_per_sec;
    row["gradients_per_sec"] = r.steps_per_sec * r.workers;
    row["efficiency"] = r.efficiency >= 0 ? nlohmann::json(r.efficiency) : nlohmann::json();
    row["pull_ms"] = r.pull_ms;
    row["delay_ms"] = r.delay_ms;
    row["push_ms"] = r.push_ms;
    row["cpu_workers"] = r.cpu_bench;
    row["cpu_ps"] = r.cpu_ps;
    const double gps = r.steps_per_sec * r.workers;
    row["cpu_ms_per_gradient_workers"] = gps > 0 ? 1e3 * r.cpu_bench / gps : 0.0;
    row["cpu_ms_per_gradient_ps"] = gps > 0 ? 1e3 * r.cpu_ps / gps : 0.0;
    row["machine_busy"] = r.machine_busy;
    row["load1"] = r.load1;
    row["stale"] = r.stale;
    row["retries"] = r.retries;
    rows.push_back(row);
    if (r.num_ps == 2 && r.workers == 8) target = &r;
  }
  j["results"] = rows;
  if (target != nullptr && target->efficiency >= 0) {
    j["target"] = {{"ps", 2},
                   {"workers", 8},
                   {"min_efficiency", 0.9},
                   {"efficiency", target->efficiency},
                   {"met", target->efficiency >= 0.9}};
    std::printf("target: efficiency >= 0.9 at K = 8 with 2 ps tasks: %.3f, %s\n",
                target->efficiency, target->efficiency >= 0.9 ? "met" : "NOT met");
  }
  std::printf("%s\n", j.dump().c_str());
  return exit_code;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "measures the sync replicas machinery alone: K simulated workers (a sleep instead of a "
      "model) against P ps_server processes on loopback.\n"
      "  sync_bench --seconds=10 --ps_list=1,2 --workers_list=1,2,4,8,16 --delay_ms=50",
      &argc, &argv);
  return pstrain::Main();
}
