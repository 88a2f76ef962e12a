// slow_clients_bench: a ps_server process under default flags, held by
// slow or silent clients from outside, while new clients come. Each case
// starts a ps of its own and opens, then keeps open:
//   grpc_pushes:N  N gRPC Push streams that send their PushHeader and
//                  then nothing (a worker whose backward is slow while it
//                  streams its push, or a client that stalls);
//   tls_silent:N   N TCP connections to a mutual-TLS ps's tensor port, every
//                  other one sending the first bytes of a ClientHello, then
//                  nothing.
// Meanwhile it times --tries new clients (a worker's fleet: connection,
// GetStatus, a push and a pull over the tensor channel, TLS for the TLS
// cases), first on the quiet ps, then beside the held connections, and
// reads the ps's threads and resident memory from /proc.
#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/ps_processes.h"
#include "cluster/placement.h"
#include "core/descriptor_limit.h"
#include "core/task_main.h"
#include "core/tls.h"
#include "core/tls_certs.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/generic_call.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/ps_client.h"
#include "ps/rpc/ps_connections.h"
#include "ps/tcp/socket.h"

DEFINE_string(cases, "grpc_pushes:64,grpc_pushes:512,tls_silent:32,tls_silent:512",
              "Comma-separated KIND:COUNT: grpc_pushes (stalled gRPC push streams) or tls_silent "
              "(silent connections to a TLS ps's tensor port)");
DEFINE_int32(tries, 20, "New clients timed per case, quiet and beside the held connections");
DEFINE_int64(bytes, 4096, "Bytes of the tensor each new client pushes and pulls");
DEFINE_int32(client_timeout_ms, 10000, "A new client's deadline for each of its calls");
DEFINE_string(ps_server, "", "The ps_server binary (default: the one of this build)");

namespace pstrain {
namespace {

using bench::Clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Case {
  std::string kind;
  int count = 0;
};

StatusOr<std::vector<Case>> ParseCases(const std::string& text) {
  std::vector<Case> cases;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(',', at);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(at, end - at);
    at = end + 1;
    const size_t colon = item.find(':');
    Case c;
    c.kind = item.substr(0, colon);
    if (colon == std::string::npos || (c.kind != "grpc_pushes" && c.kind != "tls_silent")) {
      return InvalidArgument("--cases: '" + item + "' is not grpc_pushes:N or tls_silent:N");
    }
    PS_ASSIGN_OR_RETURN(auto count, bench::ParseIntList("cases", item.substr(colon + 1), 1, 60000));
    c.count = count[0];
    cases.push_back(c);
  }
  if (cases.empty()) return InvalidArgument("--cases is empty");
  return cases;
}

const std::vector<cluster::VariableInfo>& Vars() {
  static const std::vector<cluster::VariableInfo> vars = {{"w", {FLAGS_bytes / 4}, 0}};
  return vars;
}

StatusOr<cluster::Placement> Placement() {
  return cluster::ComputePlacement(Vars(), 1, cluster::PlacementStrategy::kGreedy,
                                   std::max<int64_t>(FLAGS_bytes, 1 << 20));
}

// A new worker's first push and pull, connection included: its time in ms.
StatusOr<double> NewClientRound(const cluster::ClusterSpec& spec, int worker) {
  const auto begun = Clock::now();
  PS_ASSIGN_OR_RETURN(auto placement, Placement());
  auto fleet = ConnectFleet(spec, {Vars(), placement, {}, {}});
  for (int ps = 0; ps < fleet->num_ps(); ++ps) {
    if (auto* client = dynamic_cast<PsClient*>(fleet->client(ps))) {
      client->set_transfer_timeout(std::chrono::milliseconds(FLAGS_client_timeout_ms));
    }
  }
  PS_RETURN_IF_ERROR(fleet->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  std::vector<Tensor> grads = {Tensor({FLAGS_bytes / 4})};
  grads[0].Fill(1e-3f);
  PS_RETURN_IF_ERROR(fleet->PushGradients(grads, worker, 1, {0}, /*sync=*/false).status());
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_RETURN_IF_ERROR(fleet->PullVariables(&values, &steps));
  return Ms(Clock::now() - begun);
}

struct Figures {
  double median = 0, max = 0;
  int failed = 0;
  int max_threads = 0;
};

Figures Measure(const cluster::ClusterSpec& spec, int pid, int* worker) {
  std::vector<double> ms;
  Figures f;
  for (int i = 0; i < FLAGS_tries; ++i) {
    auto round = NewClientRound(spec, (*worker)++ % 2);
    if (round.ok()) {
      ms.push_back(*round);
    } else {
      ++f.failed;
      std::fprintf(stderr, "a new client failed: %s\n", round.status().ToString().c_str());
    }
    f.max_threads = std::max(f.max_threads, bench::ReadProcessResources(pid).threads);
  }
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    f.median = ms[ms.size() / 2];
    f.max = ms.back();
  }
  return f;
}

// What holds the ps: stalled push streams, or silent connections.
class Held {
 public:
  Status OpenPushStreams(const std::string& address, int n, uint64_t fingerprint) {
    stub_ = std::make_unique<grpc::GenericStub>(grpc::CreateCustomChannel(
        address, grpc::InsecureChannelCredentials(), DefaultChannelArguments()));
    proto::PushRequest header;
    header.mutable_header()->set_placement_fingerprint(fingerprint);
    header.mutable_header()->set_worker(1);
    header.mutable_header()->set_num_tensors(1);
    grpc::Slice slice(header.SerializeAsString());
    const grpc::ByteBuffer bytes(&slice, 1);
    for (int i = 0; i < n; ++i) {
      contexts_.push_back(std::make_unique<grpc::ClientContext>());
      contexts_.back()->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
      calls_.push_back(std::make_unique<GenericCall>(stub_.get(), contexts_.back().get(),
                                                     "/pstrain.proto.Ps/Push"));
      if (!calls_.back()->Write(bytes)) return Unavailable("push stream " + std::to_string(i));
    }
    return OkStatus();
  }
  Status OpenSilent(int port, int n) {
    const char hello_begun[] = {0x16, 0x03, 0x01, 0x02, 0x00, 0x01};
    for (int i = 0; i < n; ++i) {
      PS_ASSIGN_OR_RETURN(auto s, tcp::Socket::Connect("127.0.0.1", port, std::chrono::seconds(5)));
      if (i % 2 == 1) {
        struct iovec part = {const_cast<char*>(hello_begun), sizeof(hello_begun)};
        PS_RETURN_IF_ERROR(s->Write(&part, 1));
      }
      sockets_.push_back(std::move(s));
    }
    return OkStatus();
  }

 private:
  std::unique_ptr<grpc::GenericStub> stub_;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts_;  // outlive their calls
  std::vector<std::unique_ptr<GenericCall>> calls_;
  std::vector<std::unique_ptr<tcp::Socket>> sockets_;
};

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Certificates for a ps and for this process as its worker; the ps's
// flags.
StatusOr<std::vector<std::string>> MakeTls(const std::string& dir, TlsFiles* worker) {
  PS_ASSIGN_OR_RETURN(CertAndKey ca, MakeCa("bench CA"));
  PS_ASSIGN_OR_RETURN(CertAndKey ps, MakeCert(ca, {"ps:0", {"127.0.0.1"}}));
  PS_ASSIGN_OR_RETURN(CertAndKey me, MakeCert(ca, {"worker:0", {"127.0.0.1"}}));
  Write(dir + "/ca.crt", ca.cert_pem);
  Write(dir + "/ps.crt", ps.cert_pem);
  Write(dir + "/ps.key", ps.key_pem);
  *worker = TlsFiles{me.cert_pem, me.key_pem, ca.cert_pem, ""};
  return std::vector<std::string>{"--tls_cert=" + dir + "/ps.crt", "--tls_key=" + dir + "/ps.key",
                                  "--tls_ca=" + dir + "/ca.crt"};
}

Status RunCase(const Case& c, const std::string& dir) {
  const bool tls = c.kind == "tls_silent";
  TlsFiles worker;
  std::vector<std::string> flags;
  if (tls) {
    PS_ASSIGN_OR_RETURN(flags, MakeTls(dir, &worker));
  }
  SetTaskTls(tls ? &worker : nullptr);
  bench::PsProcesses ps;
  PS_RETURN_IF_ERROR(ps.Start(bench::PsServerPath(FLAGS_ps_server), 1, dir, false, flags));
  const cluster::ClusterSpec spec = bench::SpecFor(ps.ports(), 1);
  PS_ASSIGN_OR_RETURN(auto placement, Placement());
  auto setup = ConnectFleet(spec, {Vars(), placement, {}, {}});
  PS_RETURN_IF_ERROR(setup->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(1e-6f);
  header.set_num_workers(2);
  PS_RETURN_IF_ERROR(setup->InitVariables({Tensor({FLAGS_bytes / 4})}, header));
  PS_ASSIGN_OR_RETURN(proto::StatusResponse info,
                      setup->client(0)->GetStatus(std::chrono::seconds(10)));
  const int pid = ps.pids()[0];
  int worker_index = 0;
  const Figures quiet = Measure(spec, pid, &worker_index);
  const int64_t rss_quiet = bench::ReadProcessResources(pid).rss_bytes;
  Held held;
  const auto opened = Clock::now();
  if (tls) {
    PS_RETURN_IF_ERROR(held.OpenSilent(info.tensor_port(), c.count));
  } else {
    PS_RETURN_IF_ERROR(held.OpenPushStreams(spec.Address("ps", 0), c.count, placement.fingerprint));
  }
  const double open_ms = Ms(Clock::now() - opened);
  const Figures beside = Measure(spec, pid, &worker_index);
  const int64_t rss_held = bench::ReadProcessResources(pid).rss_bytes;
  std::printf("%-12s %6d %9.1f | %8.2f %8.2f %4d | %8.2f %8.2f %4d | %7d %7d | %8.1f\n",
              c.kind.c_str(), c.count, open_ms, quiet.median, quiet.max, quiet.failed,
              beside.median, beside.max, beside.failed, quiet.max_threads, beside.max_threads,
              (rss_held - rss_quiet) / 1048576.0);
  std::fflush(stdout);
  SetTaskTls(nullptr);
  return OkStatus();
}

Status Run() {
  RaiseDescriptorLimit();
  PS_ASSIGN_OR_RETURN(const std::vector<Case> cases, ParseCases(FLAGS_cases));
  const std::string dir =
      std::filesystem::temp_directory_path() / ("slow_clients_bench." + std::to_string(getpid()));
  std::printf(
      "new clients' connect + push + pull of %lld bytes, %d tries each, quiet and beside the held "
      "connections\n",
      static_cast<long long>(FLAGS_bytes), FLAGS_tries);
  std::printf("%-12s %6s %9s | %8s %8s %4s | %8s %8s %4s | %7s %7s | %8s\n", "case", "held",
              "open ms", "quiet md", "max ms", "fail", "held md", "max ms", "fail", "thr qt",
              "thr held", "rss +MiB");
  for (const Case& c : cases) {
    std::filesystem::create_directories(dir);
    PS_RETURN_IF_ERROR(RunCase(c, dir));
    std::filesystem::remove_all(dir);
  }
  return OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "slow_clients_bench [--cases=grpc_pushes:64,tls_silent:512] [--tries=20]\n"
      "New clients' first push + pull through a ps_server process, quiet and while slow or\n"
      "silent clients hold it: stalled gRPC push streams, silent TLS connections.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
