// scale_bench: many workers against real ps_server processes and a real
// chief, and what the ps tasks and the chief pay for them.
//
// For each P in --ps_list and W in --workers_list it starts P fresh
// ps_server processes on loopback (--transport=tensor: with their tensor
// channel; grpc: without, so tensors go over gRPC) and a chief process
// (--chief) that initializes them with a small dense model (784 x 10, 31
// KB; the chief's cluster lists W workers), asynchronous or, with --sync,
// sync replicas with replicas_to_aggregate = W - --backup_workers. Then W
// simulated workers (bench/scale/simulated_worker.h), threads of this
// process with connections of their own, register by heartbeat, pull and
// push as workers do, and report done at the end; the chief then saves,
// evaluates and shuts the ps tasks down, and the benchmark checks that every
// task exited 0. Without --chief, the benchmark initializes the ps tasks
// itself.
//
// Per point it prints: the seconds until every worker has had a push
// applied; steps/s and pushes/s over --seconds; the cycle (pull + push;
// sync: the step as a worker sees it) p50 and p99; per ps (the largest over
// the ps tasks) its threads, open descriptors, resident memory and that
// memory per worker; the ps tasks' CPU ms per applied push; the chief's CPU
// per worker per second and how long its /status and /metrics take; and the
// calls that failed, by code (0 is the goal), with the first message of
// each. A progress line while the workers start. --csv appends the points
// to a file (bench/scale/plot_scale.py draws it).
//
//   build/bench/scale_bench --ps_list=1,4,16 --workers_list=10,100,1000 [--sync]
#include <gflags/gflags.h>
#include <glog/logging.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/http_get.h"
#include "bench/ps_processes.h"
#include "bench/quantile.h"
#include "bench/scale/worker_groups.h"
#include "cluster/cluster_spec.h"
#include "cluster/placement_flags.h"
#include "core/status.h"
#include "core/task_main.h"
#include "core/tensor.h"
#include "nn/model.h"
#include "nn/model_spec.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/ps_connections.h"
#include "ps/tcp/tensor_channel_server.h"

DECLARE_int64(min_slice_bytes);  // cluster/placement_flags.cc

DEFINE_string(ps_list, "4", "Numbers of ps tasks P, comma-separated");
DEFINE_string(workers_list, "10,100,300", "Numbers of simulated workers W, comma-separated");
DEFINE_bool(sync, false, "Sync replicas: replicas_to_aggregate = W - --backup_workers");
DEFINE_int32(backup_workers, 0, "Sync: workers past replicas_to_aggregate");
DEFINE_string(transport, "tensor",
              "tensor: the ps tasks' tensor channel (over TCP); grpc: no tensor channel");
DEFINE_bool(chief, true,
            "Run a real chief process (else the benchmark initializes the ps tasks itself)");
DEFINE_int32(compute_ms, 1000,
             "Each simulated worker's pause between its pull and its push, in place of "
             "computing (0: none, every worker pulls and pushes as fast as it can)");
DEFINE_int64(rows, 0,
             "Embedding-row mode: the model looks ids up in a table of this many rows, and "
             "every step also pulls and pushes the rows of --ids_per_step ids drawn from a "
             "power law (--zipf_s); 0: the dense model alone");
DEFINE_int32(row_dim, 16, "With --rows: floats a row");
DEFINE_int32(ids_per_step, 1024, "With --rows: ids a step draws, before they are made unique");
DEFINE_double(zipf_s, 1.05, "With --rows: the exponent of the ids' power law (> 0, not 1)");
DEFINE_bool(fault, false,
            "Halfway through the window, kill ps:--fault_ps (started again, empty, on its "
            "port) and a tenth of the workers (their process): the chief restores the ps from "
            "its latest checkpoint (saved every --fault_checkpoint_secs) and training goes on");
DEFINE_int32(fault_ps, 1, "The ps task --fault kills");
DEFINE_double(fault_checkpoint_secs, 5, "With --fault: the chief's --save_checkpoint_secs");
DEFINE_double(seconds, 10, "Measured window per point, after every worker has stepped");
DEFINE_double(start_timeout_secs, 300, "Give up when the workers have not all stepped by then");
DEFINE_string(ps_server, "", "Path of ps_server; empty: <build>/ps/ps_server");
DEFINE_bool(show_ps_output, false, "Copy the ps tasks' and the chief's logs to stderr");
DEFINE_string(csv, "", "Append each point to this CSV file (with a header when new)");
DEFINE_int32(worker_processes, 0,
             "Processes the simulated workers run in (0: enough that each holds at most "
             "10,000 connections)");
// A worker group's own flags: set by the benchmark for its child processes.
DEFINE_int32(group_first, -1, "(a worker group's) first worker index; -1: not a group");
DEFINE_int32(group_count, 0, "(a worker group's) number of workers");
DEFINE_string(group_ps_ports, "", "(a worker group's) the ps tasks' ports on 127.0.0.1");
DEFINE_string(group_model_spec, "", "(a worker group's) the chief's ModelSpec file");

namespace pstrain {
namespace {

using bench::Clock;

// The model: Fashion-MNIST's images into 10 classes through one dense
// layer, 7,850 float32 (the chief evaluates it on the test set at the end).
// With --rows, the ids of the images' pixels (PIXEL_IDS) are looked up in a
// table of --rows rows, whose other rows only the simulated workers' ids
// reach, before that layer.
std::string ModelSpecText() {
  const std::string head =
      FLAGS_rows == 0
          ? std::string("name: \"scale_dense\"\ninput_shape: [28, 28, 1]\n")
          : "name: \"scale_rows\"\ninput { preprocessing: PIXEL_IDS }\nlayer {\n  name: \"rows\"\n"
            "  embedding_bag { feature: \"pixel_ids\" dim: " +
                std::to_string(FLAGS_row_dim) + " vocabulary_size: " + std::to_string(FLAGS_rows) +
                " combiner: \"sqrtn\" }\n}\n";
  return head + R"(num_classes: 10
recipe { optimizer: "GradientDescent" learning_rate: 0.01 }
layer {
  name: "logits"
  dense {
    units: 10
    weights_initializer { truncated_normal_stddev: 0.01 }
    biases_initializer { constant: 0.0 }
  }
}
)";
}

struct Point {
  int ps = 0, workers = 0;
  double start_secs = 0;  // until every worker had a push applied
  double steps_per_sec = 0;
  double pushes_per_sec = 0;
  double rows_per_sec = 0;       // --rows: rows pushed (each also pulled)
  double ps_cpu_us_per_row = 0;  // --rows: the ps tasks' CPU per row pulled and pushed
  double cycle_p50_ms = 0, cycle_p99_ms = 0;
  bench::ProcessResources worst;  // per field, the largest over the ps tasks
  double ps_cpu_ms_per_push = 0;
  double chief_cpu_ms_per_worker_sec = -1;  // -1: no chief
  double status_ms = -1, metrics_ms = -1;   // the chief's pages, fetched once each
  std::map<std::string, int64_t> errors;
  std::map<std::string, std::string> examples;
  // --fault: global_step as the ps and the workers were killed, the lowest
  // step after (the checkpoint the chief restored), and at the window's end.
  int64_t step_at_fault = -1, step_restored = -1, step_after = -1;
};

std::string ChiefPath(const std::string& ps_server) {
  return (std::filesystem::path(ps_server).parent_path().parent_path() / "chief" / "chief")
      .string();
}

// Writes the chief's cluster: the ps tasks, itself, and W workers at
// addresses nobody dials (the chief counts them; the workers reach the ps
// tasks on their own).
Status WriteChiefCluster(const std::vector<int>& ps_ports, int chief_port, int workers,
                         const std::string& path) {
  cluster::ClusterSpec spec;
  for (int port : ps_ports) spec.jobs["ps"].push_back("127.0.0.1:" + std::to_string(port));
  spec.jobs["chief"].push_back("127.0.0.1:" + std::to_string(chief_port));
  for (int w = 0; w < workers; ++w) {
    spec.jobs["worker"].push_back("127.0." + std::to_string(1 + w / 250) + "." +
                                  std::to_string(2 + w % 250) + ":9");
  }
  return cluster::WriteClusterSpec(spec, path);
}

// Milliseconds a GET of the chief's `path` takes; -1 when it fails.
double TimeGet(int port, const std::string& path) {
  const auto start = Clock::now();
  auto body = bench::HttpGet("127.0.0.1", port, path, std::chrono::seconds(10));
  if (!body.ok()) {
    LOG(WARNING) << "GET " << path << ": " << body.status().ToString();
    return -1;
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Worker processes for W workers with P ps tasks: each connection is a
// descriptor (a gRPC and a tensor channel one per worker and ps), and a
// process may hold 20,000 here.
int WorkerProcesses(int ps, int w) {
  if (FLAGS_worker_processes > 0) return std::min(FLAGS_worker_processes, w);
  const int by_descriptors = (2 * ps * w + 9999) / 10000;
  // --fault kills one of ten: a tenth of the workers.
  return std::max(1, std::min(w, FLAGS_fault ? std::max(10, by_descriptors) : by_descriptors));
}

// --fault, halfway through the window: kills ps --fault_ps (started again,
// empty) and the first worker group, then watches global_step until the
// window ends.
Status InjectFault(bench::PsProcesses* procs, bench::WorkerGroups* groups, PsFleet* control,
                   Point* p) {
  std::this_thread::sleep_for(std::chrono::duration<double>(FLAGS_seconds / 2));
  // ps:0's step just before the kill (asked again if a call of the
  // benchmark's own fails under load).
  auto before = control->CoordinatorStatus();
  for (int tries = 1; !before.ok() && tries < 10; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    before = control->CoordinatorStatus();
  }
  PS_RETURN_IF_ERROR(before.status());
  p->step_at_fault = before->global_step();
  groups->Kill(0);
  PS_RETURN_IF_ERROR(procs->RestartPs(FLAGS_fault_ps));
  p->step_restored = p->step_at_fault;
  const auto end = Clock::now() + std::chrono::duration<double>(FLAGS_seconds / 2);
  while (Clock::now() < end) {
    auto st = control->CoordinatorStatus();
    if (st.ok()) {
      p->step_restored = std::min<int64_t>(p->step_restored, st->global_step());
      p->step_after = st->global_step();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return OkStatus();
}

std::string JoinInts(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

// Starts the workers, waits for all to step (a progress line meanwhile),
// measures the window, and stops them; what they saw goes to *p.
Status RunWorkers(int ps, int w, const std::vector<int>& ports, const std::string& spec_path,
                  PsFleet* control, bench::PsProcesses* procs, int chief_pid, int http_port,
                  Point* p) {
  bench::GroupSpec all;
  all.count = w;
  all.ps_ports = ports;
  all.model_spec = spec_path;
  all.sync = FLAGS_sync;
  all.compute = std::chrono::milliseconds(FLAGS_compute_ms);
  all.ids_per_step = FLAGS_ids_per_step;
  all.zipf_s = FLAGS_zipf_s;
  const auto start = Clock::now();
  PS_ASSIGN_OR_RETURN(
      auto groups,
      bench::WorkerGroups::Start("/proc/self/exe", WorkerProcesses(ps, w), all,
                                 FLAGS_show_ps_output, [](const bench::GroupSpec& g) {
                                   return std::vector<std::string>{
                                       "--group_first=" + std::to_string(g.first),
                                       "--group_count=" + std::to_string(g.count),
                                       "--group_ps_ports=" + JoinInts(g.ps_ports),
                                       "--group_model_spec=" + g.model_spec,
                                       std::string("--sync=") + (g.sync ? "1" : "0"),
                                       "--min_slice_bytes=" + std::to_string(FLAGS_min_slice_bytes),
                                       "--compute_ms=" + std::to_string(g.compute.count()),
                                       "--ids_per_step=" + std::to_string(g.ids_per_step),
                                       "--zipf_s=" + std::to_string(g.zipf_s)};
                                 }));
  auto last_line = start;
  while (groups->stepped() < w) {
    const auto now = Clock::now();
    if (now - start > std::chrono::duration<double>(FLAGS_start_timeout_secs)) break;
    if (now - last_line >= std::chrono::seconds(2)) {
      std::fprintf(stderr, "  P=%d W=%d: of %d workers %d have pulled, %d stepped, after %.0f s\n",
                   ps, w, w, groups->pulled(), groups->stepped(),
                   std::chrono::duration<double>(now - start).count());
      last_line = now;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  p->start_secs = std::chrono::duration<double>(Clock::now() - start).count();
  Status outcome = groups->stepped() == w
                       ? OkStatus()
                       : DeadlineExceeded(std::to_string(w - groups->stepped()) + " of " +
                                          std::to_string(w) + " workers never stepped");
  if (outcome.ok()) {
    auto step0 = control->CoordinatorStatus();
    const bench::CpuSample c0 = bench::SampleCpu();
    const double chief0 =
        chief_pid > 0 ? bench::ProcessCpuSec(std::to_string(chief_pid), nullptr, nullptr) : 0;
    groups->StartWindow();
    if (FLAGS_fault) {
      outcome = InjectFault(procs, groups.get(), control, p);
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(FLAGS_seconds));
    }
    bench::WorkerGroups::Window window;
    const Status windowed = groups->EndWindow(std::chrono::seconds(60), &window);
    const int64_t pushes = window.pushes;
    if (outcome.ok()) outcome = windowed;
    auto step1 = control->CoordinatorStatus();
    const bench::CpuSample c1 = bench::SampleCpu();
    const double secs = std::chrono::duration<double>(c1.when - c0.when).count();
    if (chief_pid > 0) {
      const double chief1 = bench::ProcessCpuSec(std::to_string(chief_pid), nullptr, nullptr);
      p->chief_cpu_ms_per_worker_sec = 1e3 * (chief1 - chief0) / secs / w;
      p->status_ms = TimeGet(http_port, "/status");
      p->metrics_ms = TimeGet(http_port, "/metrics");
    }
    if (step0.ok() && step1.ok()) {
      p->steps_per_sec = (step1->global_step() - step0->global_step()) / secs;
    }
    p->pushes_per_sec = pushes / secs;
    p->ps_cpu_ms_per_push = pushes > 0 ? 1e3 * (c1.ps_sec - c0.ps_sec) / pushes : 0;
    p->rows_per_sec = window.rows / secs;
    p->ps_cpu_us_per_row = window.rows > 0 ? 1e6 * (c1.ps_sec - c0.ps_sec) / window.rows : 0;
    p->cycle_p50_ms = bench::Quantile(&window.cycles_ms, 0.5);
    p->cycle_p99_ms = bench::Quantile(&window.cycles_ms, 0.99);
    for (int pid : procs->pids()) {
      const bench::ProcessResources r = bench::ReadProcessResources(pid);
      p->worst.threads = std::max(p->worst.threads, r.threads);
      p->worst.rss_bytes = std::max(p->worst.rss_bytes, r.rss_bytes);
      p->worst.descriptors = std::max(p->worst.descriptors, r.descriptors);
    }
  }
  const Status stopped = groups->Stop(std::chrono::seconds(120), &p->errors, &p->examples);
  return outcome.ok() ? stopped : outcome;
}

StatusOr<Point> RunPoint(const std::string& binary, int ps, int w, const std::string& dir) {
  Point p;
  p.ps = ps;
  p.workers = w;
  bench::PsProcesses procs;
  // Every simulated worker connects from 127.0.0.1, one host to the ps's
  // per-peer cap (a share for each host of a real cluster): it is lifted
  // to the overall cap, so each worker counts as the host it stands for.
  std::vector<std::string> extra = {"--tensor_max_connections_per_peer=" +
                                    std::to_string(tcp::ChannelLimits().max_connections)};
  if (FLAGS_transport == "grpc") extra.push_back("--tensor_port=-1");
  PS_RETURN_IF_ERROR(procs.Start(binary, ps, dir, FLAGS_show_ps_output, extra));

  const std::string spec_path = dir + "/model.pbtxt";
  std::ofstream(spec_path) << ModelSpecText();
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, nn::LoadModelSpec(spec_path));
  PS_ASSIGN_OR_RETURN(auto model, nn::CreateModel(spec));
  PS_ASSIGN_OR_RETURN(const cluster::PlacementOptions placement,
                      cluster::PlacementOptionsFromFlags());
  PS_ASSIGN_OR_RETURN(
      PsFleet::Layout layout,
      PsFleet::LayoutOf(ps, model->variables(), /*slots_per_variable=*/0, placement));
  for (const nn::EmbeddingLookup& lookup : model->lookups()) layout.tables.push_back(lookup.table);
  auto control = ConnectFleet(bench::SpecFor(procs.ports(), 1), layout);
  PS_RETURN_IF_ERROR(control->WaitForPs(false, nullptr, std::chrono::seconds(30)));

  int chief_pid = 0, http_port = 0;
  ReservedPorts chief_ports;
  if (FLAGS_chief) {
    PS_ASSIGN_OR_RETURN(chief_ports, ReservedPorts::Reserve("127.0.0.1", 1));
    // The chief's HTTP server binds its port alone (no SO_REUSEPORT): a
    // port free a moment ago, which nothing else on this machine takes.
    PS_ASSIGN_OR_RETURN(http_port, bench::FreePortNow("127.0.0.1"));
    const std::string cluster = dir + "/job.json";
    PS_RETURN_IF_ERROR(WriteChiefCluster(procs.ports(), chief_ports.ports()[0], w, cluster));
    std::vector<std::string> argv = {
        ChiefPath(binary), "--cluster_spec=" + cluster, "--job=chief", "--task=0",
        "--model=" + spec_path, "--train_dir=" + dir + "/train", "--http_host=127.0.0.1",
        "--http_port=" + std::to_string(http_port),
        // Workers go quiet while 2 cores serve a thousand;
        // the killed ones of --fault are declared dead sooner.
        std::string("--heartbeat_timeout_secs=") + (FLAGS_fault ? "15" : "60"),
        "--min_slice_bytes=" + std::to_string(FLAGS_min_slice_bytes)};
    if (FLAGS_fault) {
      argv.push_back("--save_checkpoint_secs=" + std::to_string(FLAGS_fault_checkpoint_secs));
    }
    if (FLAGS_sync) {
      argv.push_back("--sync_replicas");
      argv.push_back("--replicas_to_aggregate=" + std::to_string(w - FLAGS_backup_workers));
    }
    PS_ASSIGN_OR_RETURN(chief_pid, procs.AddTask("chief:0", argv));
  } else {
    std::vector<Tensor> init;
    for (const auto& v : layout.variables) init.emplace_back(v.shape);
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(0.01f);
    header.set_heartbeat_timeout_secs(60);
    header.set_num_workers(w);
    if (FLAGS_sync) {
      header.mutable_sync()->set_enabled(true);
      header.mutable_sync()->set_replicas_to_aggregate(w - FLAGS_backup_workers);
      header.mutable_sync()->set_total_num_replicas(w);
    }
    PS_RETURN_IF_ERROR(control->InitVariables(init, header));
  }

  Status outcome =
      RunWorkers(ps, w, procs.ports(), spec_path, control.get(), &procs, chief_pid, http_port, &p);
  if (!FLAGS_chief) {
    Status down = control->ShutdownAll("scale_bench done");
    if (outcome.ok() && !down.ok()) outcome = down;
  }
  // With a chief: every worker said done; the chief saves, evaluates and
  // shuts the ps tasks down.
  if (!procs.WaitForExit(std::chrono::seconds(120)) && outcome.ok()) {
    outcome = Internal("the tasks did not all exit: " + procs.ExitDescriptions());
  }
  if (outcome.ok() && !procs.AllSucceeded()) {
    outcome = Internal("a task failed: " + procs.ExitDescriptions());
  }
  procs.Stop();
  if (!outcome.ok()) return outcome;
  return p;
}

void AppendCsv(const Point& p) {
  const bool fresh = !std::filesystem::exists(FLAGS_csv);
  std::ofstream out(FLAGS_csv, std::ios::app);
  if (fresh) {
    out << "mode,transport,ps,workers,compute_ms,start_s,steps_per_s,pushes_per_s,cycle_p50_ms,"
           "cycle_p99_ms,ps_threads,ps_fds,ps_rss_bytes,ps_cpu_ms_per_push,"
           "chief_cpu_ms_per_worker_s,status_ms,metrics_ms,failed_calls,rows,rows_per_s,"
           "ps_cpu_us_per_row\n";
  }
  int64_t failed = 0;
  for (const auto& e : p.errors) failed += e.second;
  out << (FLAGS_sync ? "sync" : "async") << "," << FLAGS_transport << "," << p.ps << ","
      << p.workers << "," << FLAGS_compute_ms << "," << p.start_secs << "," << p.steps_per_sec
      << "," << p.pushes_per_sec << "," << p.cycle_p50_ms << "," << p.cycle_p99_ms << ","
      << p.worst.threads << "," << p.worst.descriptors << "," << p.worst.rss_bytes << ","
      << p.ps_cpu_ms_per_push << "," << p.chief_cpu_ms_per_worker_sec << "," << p.status_ms << ","
      << p.metrics_ms << "," << failed << "," << FLAGS_rows << "," << p.rows_per_sec << ","
      << p.ps_cpu_us_per_row << "\n";
}

int Main() {
  // The model's weights in slices of 1 KB or more: every ps task holds
  // some of it (16 ps tasks: 16 slices of 49 x 10), as a model that
  // needs them would.
  if (gflags::GetCommandLineFlagInfoOrDie("min_slice_bytes").is_default) {
    FLAGS_min_slice_bytes = 1024;
  }
  if (FLAGS_group_first >= 0) {
    auto ports = bench::ParseIntList("group_ps_ports", FLAGS_group_ps_ports, 1, 65535);
    if (!ports.ok()) {
      std::fprintf(stderr, "scale_bench: %s\n", ports.status().message().c_str());
      return 1;
    }
    bench::GroupSpec spec;
    spec.first = FLAGS_group_first;
    spec.count = FLAGS_group_count;
    spec.ps_ports = *ports;
    spec.model_spec = FLAGS_group_model_spec;
    spec.sync = FLAGS_sync;
    spec.compute = std::chrono::milliseconds(FLAGS_compute_ms);
    spec.ids_per_step = FLAGS_ids_per_step;
    spec.zipf_s = FLAGS_zipf_s;
    return bench::RunWorkerGroup(spec);
  }
  if (FLAGS_transport != "tensor" && FLAGS_transport != "grpc") {
    std::fprintf(stderr, "scale_bench: --transport=%s: tensor or grpc\n", FLAGS_transport.c_str());
    return 1;
  }
  if (FLAGS_fault && !FLAGS_chief) {
    std::fprintf(stderr, "scale_bench: --fault needs --chief (it restores the killed ps)\n");
    return 1;
  }
  // The chief evaluates on Fashion-MNIST's pixel ids, 784 pixels of 4
  // levels each: the table holds those ids at least.
  constexpr int64_t kPixelIds = 784 * 4;
  if ((FLAGS_rows != 0 && FLAGS_rows < kPixelIds) || FLAGS_rows > (int64_t{1} << 31) ||
      FLAGS_row_dim < 1 || FLAGS_ids_per_step < 1 || !(FLAGS_zipf_s > 0) || FLAGS_zipf_s == 1) {
    std::fprintf(stderr,
                 "scale_bench: --rows=%lld --row_dim=%d --ids_per_step=%d --zipf_s=%g: rows 0 or "
                 "from 3136 (the pixel ids the chief evaluates on) to 2^31, row_dim and "
                 "ids_per_step at least 1, zipf_s above 0 and not 1\n",
                 static_cast<long long>(FLAGS_rows), FLAGS_row_dim, FLAGS_ids_per_step,
                 FLAGS_zipf_s);
    return 1;
  }
  auto ps_list = bench::ParseIntList("ps_list", FLAGS_ps_list, 1, 256);
  auto workers_list = bench::ParseIntList("workers_list", FLAGS_workers_list, 1, 60000);
  for (const auto* list : {&ps_list, &workers_list}) {
    if (!list->ok()) {
      std::fprintf(stderr, "scale_bench: %s\n", list->status().message().c_str());
      return 1;
    }
  }
  for (int w : *workers_list) {
    if (FLAGS_backup_workers < 0 || (FLAGS_sync && FLAGS_backup_workers >= w)) {
      std::fprintf(stderr, "scale_bench: --backup_workers=%d: from 0 to W - 1 (W = %d)\n",
                   FLAGS_backup_workers, w);
      return 1;
    }
  }
  const std::string binary = bench::PsServerPath(FLAGS_ps_server);
  const std::string model =
      FLAGS_rows > 0 ? "an embedding table of " + std::to_string(FLAGS_rows) + " rows of " +
                           std::to_string(FLAGS_row_dim) + " floats (each step the rows of " +
                           std::to_string(FLAGS_ids_per_step) + " ids drawn by a power law, s = " +
                           std::to_string(FLAGS_zipf_s).substr(0, 4) + ") and a dense layer"
                     : "784 x 10 dense model (31 KB, in slices of " +
                           std::to_string(FLAGS_min_slice_bytes) + " bytes or more)";
  std::printf(
      "scale_bench: %s, %s, %s; %s; %d ms of computing a step; %.0f s window; %ld cores, load "
      "average %.2f; ps flags: defaults, but the per-peer connection cap lifted to the overall "
      "one (the workers all connect from 127.0.0.1)\n",
      FLAGS_sync ? ("sync, R = W - " + std::to_string(FLAGS_backup_workers)).c_str() : "async",
      FLAGS_transport.c_str(), FLAGS_chief ? "a real chief" : "no chief", model.c_str(),
      FLAGS_compute_ms, FLAGS_seconds, sysconf(_SC_NPROCESSORS_ONLN), bench::LoadAverage1());
  std::printf("%4s %6s %7s %8s %8s %8s %8s %7s %5s %7s %7s %8s %9s %7s %7s  %s\n", "P", "W",
              "start_s", "steps/s", "pushes/s", "p50_ms", "p99_ms", "threads", "fds", "rss_MB",
              "KB/wkr", "ms/push", "chief_ms", "stat_ms", "met_ms", "failed calls");
  std::fflush(stdout);
  int exit_code = 0;
  for (int ps : *ps_list) {
    for (int w : *workers_list) {
      const std::string dir = (std::filesystem::temp_directory_path() /
                               ("pstrain_scale_bench_" + std::to_string(getpid())))
                                  .string();
      std::filesystem::create_directories(dir);
      auto p = RunPoint(binary, ps, w, dir);
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
      if (!p.ok()) {
        std::printf("%4d %6d failed: %s\n", ps, w, p.status().ToString().c_str());
        std::fflush(stdout);
        exit_code = 1;
        continue;
      }
      std::string errors;
      for (const auto& [code, n] : p->errors) {
        errors += (errors.empty() ? "" : ", ") + code + " " + std::to_string(n);
      }
      std::printf(
          "%4d %6d %7.1f %8.1f %8.1f %8.1f %8.1f %7d %5d %7.1f %7.1f %8.3f %9.4f %7.1f "
          "%7.1f  %s\n",
          ps, w, p->start_secs, p->steps_per_sec, p->pushes_per_sec, p->cycle_p50_ms,
          p->cycle_p99_ms, p->worst.threads, p->worst.descriptors, p->worst.rss_bytes / 1e6,
          p->worst.rss_bytes / 1e3 / w, p->ps_cpu_ms_per_push, p->chief_cpu_ms_per_worker_sec,
          p->status_ms, p->metrics_ms, errors.empty() ? "none" : errors.c_str());
      if (FLAGS_rows > 0) {
        std::printf(
            "            rows: %.0f a second pulled and pushed, %.0f a step; %.2f us of ps CPU a "
            "row (its pull and push, with the step's dense part)\n",
            p->rows_per_sec, p->pushes_per_sec > 0 ? p->rows_per_sec / p->pushes_per_sec : 0.0,
            p->ps_cpu_us_per_row);
      }
      for (const auto& [code, message] : p->examples) {
        std::printf("            first %s: %s\n", code.c_str(), message.c_str());
      }
      if (FLAGS_fault) {
        std::printf(
            "            fault: ps:%d and %d workers killed at global_step %lld; the "
            "chief restored step %lld (%lld steps lost); step %lld at the window's end; "
            "every other task exited 0\n",
            FLAGS_fault_ps, w / WorkerProcesses(ps, w), static_cast<long long>(p->step_at_fault),
            static_cast<long long>(p->step_restored),
            static_cast<long long>(p->step_at_fault - p->step_restored),
            static_cast<long long>(p->step_after));
      }
      std::fflush(stdout);
      if (!FLAGS_csv.empty()) AppendCsv(*p);
    }
  }
  return exit_code;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "many simulated workers against real ps_server processes and a real chief, and what "
      "the ps tasks and the chief pay for them.\n"
      "  scale_bench --ps_list=1,4,16 --workers_list=10,100,1000 [--sync] [--transport=grpc] "
      "[--rows=N]",
      &argc, &argv);
  return pstrain::Main();
}
