// transfer_bench: the data plane alone (docs/BENCHMARKS.md). One real
// ps_server process on loopback holds one variable; this process pushes a
// gradient of the variable's size and pulls the variable back, round after
// round, through PsFleet as a worker does (async; over the ps's tensor
// channel, or with --transport=grpc over gRPC in chunks).
//
// For every size in --sizes it prints the median milliseconds per round
// (push + pull), the rate each way (2 x bytes / round: each direction moves
// the tensor once per round), and the CPU milliseconds per MB moved on each
// side (this process; the ps_server process), from /proc.
#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "bench/ps_processes.h"
#include "cluster/placement.h"
#include "core/task_main.h"
#include "core/tls.h"
#include "deploy/local/local_certs.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/ps_connections.h"

DEFINE_string(sizes, "4K,64K,1M,4280K,16M,64M,256M",
              "Tensor sizes in bytes, comma-separated; K, M suffixes are powers of 1024 "
              "(4280K is the 4.28 MB of the data-plane issue)");
DEFINE_double(seconds, 3, "Measured wall time per size (at least --min_rounds rounds)");
DEFINE_int32(min_rounds, 5, "Measured rounds per size at least");
DEFINE_int32(warmup_rounds, 2, "Unmeasured rounds per size first");
DEFINE_string(ps_server, "",
              "Path of the ps_server binary; empty: <build>/ps/ps_server, found from this "
              "binary's path <build>/bench/transfer_bench");
DEFINE_bool(show_ps_output, false, "Copy the ps process's log lines to stderr");
DEFINE_string(wire_dtype, "float32",
              "How the tensors travel: float32 or bfloat16 (the tensor channel only)");
DEFINE_string(transport, "channel",
              "How tensors travel: channel (the ps's tensor channel, the default) or grpc (the "
              "ps started with --tensor_port=-1)");
DEFINE_bool(shared_memory, true,
            "Let the tensor channel carry the tensors through shared memory (the ps is on "
            "this host); false: its socket alone");
DEFINE_bool(arena, true,
            "Keep the pushed and pulled tensors in the task's arena, as a worker's Trainer "
            "does (with shared memory: the ps reads and writes them where they lie); false: "
            "ordinary tensors, copied through each connection's region");
DEFINE_bool(tls, false,
            "Mutual TLS between this client and the ps, on gRPC and the tensor channel (no "
            "shared memory then), with certificates made for the run");

namespace pstrain {
namespace {

StatusOr<std::vector<int64_t>> ParseSizes(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    char* end = nullptr;
    int64_t v = std::strtoll(item.c_str(), &end, 10);
    if (*end == 'K') v <<= 10, ++end;
    if (*end == 'M') v <<= 20, ++end;
    if (*end != '\0' || v < 4 || v % 4 != 0 || v > (int64_t{1} << 32)) {
      return InvalidArgument("--sizes: bad entry '" + item + "' (bytes, a multiple of 4)");
    }
    sizes.push_back(v);
  }
  if (sizes.empty()) return InvalidArgument("--sizes is empty");
  return sizes;
}

struct SizeResult {
  int64_t bytes = 0;
  int rounds = 0;
  double median_ms = 0, min_ms = 0;
  double client_cpu_ms_per_mb = 0, ps_cpu_ms_per_mb = 0;
};

StatusOr<SizeResult> Measure(const std::vector<int>& ports, int64_t bytes) {
  const std::vector<cluster::VariableInfo> vars = {{"w", {bytes / 4}, 0}};
  PS_ASSIGN_OR_RETURN(auto placement,
                      cluster::ComputePlacement(vars, 1, cluster::PlacementStrategy::kGreedy,
                                                std::max<int64_t>(bytes, 1 << 20)));
  PsClientOptions options;
  if (FLAGS_wire_dtype == "bfloat16") options.wire_dtype = proto::DT_BFLOAT16;
  options.shared_memory = FLAGS_shared_memory;
  std::unique_ptr<PsFleet> connected =
      ConnectFleet(bench::SpecFor(ports, 1), {vars, placement, {}, {}}, options, FLAGS_arena);
  PsFleet& fleet = *connected;
  PS_RETURN_IF_ERROR(fleet.WaitForPs(false, nullptr, std::chrono::seconds(30)));
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(1e-6f);
  header.set_num_workers(1);
  PS_RETURN_IF_ERROR(fleet.InitVariables({Tensor({bytes / 4})}, header));

  std::vector<Tensor> grads, values;
  if (FLAGS_arena) {
    grads = fleet.VariableBuffers();
    values = fleet.VariableBuffers();
  } else {
    grads = {Tensor({bytes / 4})};
  }
  grads[0].Fill(1.0f);
  PsFleet::PsSteps steps = {0};
  int64_t local_step = 0;
  auto round = [&]() -> Status {
    PS_RETURN_IF_ERROR(fleet.PushGradients(grads, 0, ++local_step, steps, /*sync=*/false).status());
    return fleet.PullVariables(&values, &steps);
  };
  for (int i = 0; i < FLAGS_warmup_rounds; ++i) PS_RETURN_IF_ERROR(round());

  std::vector<double> ms;
  const bench::CpuSample c0 = bench::SampleCpu();
  while (static_cast<int>(ms.size()) < FLAGS_min_rounds ||
         std::chrono::duration<double>(bench::Clock::now() - c0.when).count() < FLAGS_seconds) {
    const auto t0 = bench::Clock::now();
    PS_RETURN_IF_ERROR(round());
    ms.push_back(std::chrono::duration<double, std::milli>(bench::Clock::now() - t0).count());
  }
  const bench::CpuSample c1 = bench::SampleCpu();

  SizeResult r;
  r.bytes = bytes;
  r.rounds = static_cast<int>(ms.size());
  std::sort(ms.begin(), ms.end());
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();
  const double mb_moved = 2.0 * bytes * r.rounds / 1e6;  // both directions
  r.client_cpu_ms_per_mb = (c1.self_sec - c0.self_sec) * 1e3 / mb_moved;
  r.ps_cpu_ms_per_mb = (c1.ps_sec - c0.ps_sec) * 1e3 / mb_moved;
  return r;
}

// Certificates for the ps (its flags) and for this process, the worker
// (TaskTls()), made as pstrain_local --tls makes them.
Status UseTls(const std::string& dir, std::vector<std::string>* ps_args) {
  PS_RETURN_IF_ERROR(WriteLocalCerts(dir, "127.0.0.1", {"ps:0", "worker:0"}));
  for (std::string& flag : LocalTlsFlags(dir, "ps:0")) ps_args->push_back(std::move(flag));
  PS_ASSIGN_OR_RETURN(TlsFiles files, LoadLocalCerts(dir, "worker:0"));
  SetTaskTls(&files);
  return OkStatus();
}

Status Run() {
  PS_ASSIGN_OR_RETURN(std::vector<int64_t> sizes, ParseSizes(FLAGS_sizes));
  const std::string dir =
      std::filesystem::temp_directory_path() / ("transfer_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  bench::PsProcesses ps;
  if (FLAGS_transport != "channel" && FLAGS_transport != "grpc") {
    return InvalidArgument("--transport=" + FLAGS_transport + ": channel or grpc");
  }
  std::vector<std::string> ps_args;
  if (FLAGS_transport == "grpc") ps_args.push_back("--tensor_port=-1");
  if (FLAGS_tls) PS_RETURN_IF_ERROR(UseTls(dir, &ps_args));
  PS_RETURN_IF_ERROR(
      ps.Start(bench::PsServerPath(FLAGS_ps_server), 1, dir, FLAGS_show_ps_output, ps_args));
  if (FLAGS_wire_dtype != "float32" && FLAGS_wire_dtype != "bfloat16") {
    return InvalidArgument("--wire_dtype=" + FLAGS_wire_dtype + ": float32 or bfloat16");
  }
  std::printf("transport: %s%s, %s on the wire\n",
              FLAGS_transport == "grpc"           ? "gRPC"
              : FLAGS_shared_memory && !FLAGS_tls ? "tensor channel through shared memory"
                                                  : "tensor channel, its socket alone",
              FLAGS_tls ? " over mutual TLS" : "", FLAGS_wire_dtype.c_str());

  std::printf("%12s %7s %10s %10s %12s %16s %16s\n", "bytes", "rounds", "median ms", "min ms",
              "GB/s each", "client CPU ms/MB", "ps CPU ms/MB");
  for (int64_t bytes : sizes) {
    auto r = Measure(ps.ports(), bytes);
    if (!r.ok()) return r.status().Annotate(std::to_string(bytes) + " bytes");
    std::printf("%12lld %7d %10.3f %10.3f %12.2f %16.3f %16.3f\n", static_cast<long long>(r->bytes),
                r->rounds, r->median_ms, r->min_ms, 2.0 * r->bytes / (r->median_ms * 1e-3) / 1e9,
                r->client_cpu_ms_per_mb, r->ps_cpu_ms_per_mb);
    std::fflush(stdout);
  }
  ps.Stop();
  std::filesystem::remove_all(dir);
  return OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "transfer_bench [--sizes=4K,...,256M] [--seconds=3]\n"
      "Push + pull of one tensor through a real ps_server process on loopback, per size: ms\n"
      "per round, GB/s each way, CPU ms per MB moved on each side.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
