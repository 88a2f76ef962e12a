// channel_flood_bench: a ps_server process under a flood on its tensor port
// (idle connections, and senders trickling a byte every 100 ms), against the
// same ps quiet. Measured each way, over TCP or through the ps's local
// socket (--shared_memory):
//   - push + pull of one tensor by a client already connected;
//   - a new client's first push + pull, connection and GetStatus included,
//     as a worker joining meanwhile would make them;
//   - the ps's threads (idle connections should cost none).
#include <gflags/gflags.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/ps_processes.h"
#include "cluster/placement.h"
#include "core/descriptor_limit.h"
#include "core/task_main.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/ps_client.h"
#include "ps/rpc/ps_connections.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"

DEFINE_int32(idle_connections, 1000, "Idle connections the flood holds open");
DEFINE_int32(slow_senders, 20,
             "Connections sending a frame a byte every 100 ms (reconnecting when cut off)");
DEFINE_int64(bytes, 4382720, "Bytes of the tensor pushed and pulled");
DEFINE_double(seconds, 15,
              "Measured time, quiet and flooded each (the slow senders' frames time out "
              "after the ps's --tensor_frame_timeout_secs, 10 s by default)");
DEFINE_int32(new_client_every, 20, "A new client's first push + pull every this many rounds");
DEFINE_bool(shared_memory, false,
            "The clients go through the ps's local socket and shared memory (else TCP, "
            "beside the flood)");
DEFINE_string(ps_server, "", "The ps_server binary (default: the one of this build)");
DEFINE_int32(flood_port, 0,
             "Only flood this tensor port on 127.0.0.1 (a ps of a running job) for "
             "--seconds, and measure nothing");

namespace pstrain {
namespace {

using bench::Clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// Threads of a process, from /proc.
int Threads(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// The ps_server child of this process.
int PsPid() {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    int ppid = 0;
    std::string comm;
    if (bench::ProcessCpuSec(name, &ppid, &comm) >= 0 && ppid == getpid() && comm == "ps_server") {
      return std::stoi(name);
    }
  }
  return -1;
}

struct Client {
  std::unique_ptr<PsFleet> fleet;
  std::vector<Tensor> grads, values;
  PsFleet::PsSteps steps = {0};
  int64_t local_step = 0;
};

const std::vector<cluster::VariableInfo>& Vars() {
  static const std::vector<cluster::VariableInfo> vars = {{"w", {FLAGS_bytes / 4}, 0}};
  return vars;
}

StatusOr<std::unique_ptr<Client>> Connect(const std::vector<int>& ports) {
  PS_ASSIGN_OR_RETURN(auto placement,
                      cluster::ComputePlacement(Vars(), 1, cluster::PlacementStrategy::kGreedy,
                                                std::max<int64_t>(FLAGS_bytes, 1 << 20)));
  auto c = std::make_unique<Client>();
  PsClientOptions options;
  options.shared_memory = FLAGS_shared_memory;
  c->fleet = ConnectFleet(bench::SpecFor(ports, 1), {Vars(), placement, {}, {}}, options);
  PS_RETURN_IF_ERROR(c->fleet->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  c->grads = {Tensor({FLAGS_bytes / 4})};
  c->grads[0].Fill(1e-3f);
  return c;
}

Status Round(Client* c) {
  PS_RETURN_IF_ERROR(c->fleet
                         ->PushGradients(c->grads, 0, ++c->local_step, c->steps,
                                         /*sync=*/false)
                         .status());
  return c->fleet->PullVariables(&c->values, &c->steps);
}

struct Figures {
  double round_median = 0, round_max = 0, new_median = 0, new_max = 0;
};

double Median(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// Rounds of the connected client for FLAGS_seconds, a new client's among
// them every FLAGS_new_client_every.
StatusOr<Figures> Measure(const std::vector<int>& ports, Client* connected) {
  std::vector<double> rounds, news;
  const auto start = Clock::now();
  while (Ms(Clock::now() - start) < FLAGS_seconds * 1e3) {
    const auto t0 = Clock::now();
    PS_RETURN_IF_ERROR(Round(connected));
    rounds.push_back(Ms(Clock::now() - t0));
    if (rounds.size() % FLAGS_new_client_every == 0) {
      const auto t1 = Clock::now();
      PS_ASSIGN_OR_RETURN(auto c, Connect(ports));
      PS_RETURN_IF_ERROR(Round(c.get()));
      news.push_back(Ms(Clock::now() - t1));
    }
  }
  Figures f;
  f.round_median = Median(rounds);
  f.round_max = *std::max_element(rounds.begin(), rounds.end());
  f.new_median = Median(news);
  f.new_max = *std::max_element(news.begin(), news.end());
  return f;
}

// The flood: idle connections, and slow senders of a push header frame
// announcing 1000 bytes of metadata, a byte every 100 ms, reconnecting
// when the ps cuts them off.
class Flood {
 public:
  Status Start(int port) {
    for (int i = 0; i < FLAGS_idle_connections; ++i) {
      PS_ASSIGN_OR_RETURN(auto s, tcp::Socket::Connect("127.0.0.1", port, std::chrono::seconds(5)));
      idle_.push_back(std::move(s));
    }
    trickle_ = std::thread([this, port] { Trickle(port); });
    return OkStatus();
  }
  ~Flood() {
    stop_ = true;
    if (trickle_.joinable()) trickle_.join();
  }
  int cut_off() const { return cut_off_; }

 private:
  void Trickle(int port) {
    std::string frame(tcp::kFrameHeaderBytes, '\0');
    const uint32_t head[4] = {tcp::kFrameMagic, 1, 1000, 0};
    std::memcpy(frame.data(), head, sizeof(head));
    frame.append(1000, 'x');
    std::vector<std::unique_ptr<tcp::Socket>> slow(FLAGS_slow_senders);
    std::vector<size_t> sent(slow.size(), 0);
    while (!stop_) {
      for (size_t i = 0; i < slow.size(); ++i) {
        if (slow[i] == nullptr || sent[i] == frame.size()) {
          auto s = tcp::Socket::Connect("127.0.0.1", port, std::chrono::seconds(5));
          if (!s.ok()) continue;
          slow[i] = std::move(s).value();
          sent[i] = 0;
        }
        struct iovec one = {&frame[sent[i]], 1};
        if (slow[i]->Write(&one, 1).ok() && !slow[i]->PeerGone()) {
          ++sent[i];
        } else {
          ++cut_off_;
          slow[i].reset();
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::vector<std::unique_ptr<tcp::Socket>> idle_;
  std::thread trickle_;
  std::atomic<bool> stop_{false};
  std::atomic<int> cut_off_{0};
};

Status Run() {
  RaiseDescriptorLimit();
  if (FLAGS_flood_port > 0) {
    Flood flood;
    PS_RETURN_IF_ERROR(flood.Start(FLAGS_flood_port));
    std::printf("flooding 127.0.0.1:%d: %d idle connections, %d slow senders\n", FLAGS_flood_port,
                FLAGS_idle_connections, FLAGS_slow_senders);
    std::fflush(stdout);
    std::this_thread::sleep_for(std::chrono::duration<double>(FLAGS_seconds));
    std::printf("slow senders cut off by the ps: %d\n", flood.cut_off());
    return OkStatus();
  }
  const std::string dir =
      std::filesystem::temp_directory_path() / ("channel_flood_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  bench::PsProcesses ps;
  PS_RETURN_IF_ERROR(ps.Start(bench::PsServerPath(FLAGS_ps_server), 1, dir));
  PS_ASSIGN_OR_RETURN(auto connected, Connect(ps.ports()));
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(1e-6f);
  header.set_num_workers(1);
  PS_RETURN_IF_ERROR(connected->fleet->InitVariables({Tensor({FLAGS_bytes / 4})}, header));
  for (int i = 0; i < 50; ++i) PS_RETURN_IF_ERROR(Round(connected.get()));
  PsClient status(0, bench::SpecFor(ps.ports(), 1).Address("ps", 0));
  PS_ASSIGN_OR_RETURN(proto::StatusResponse info, status.GetStatus(std::chrono::seconds(10)));
  const int pid = PsPid();

  std::printf("push + pull of %lld bytes, %s; flood: %d idle connections, %d slow senders\n",
              static_cast<long long>(FLAGS_bytes),
              FLAGS_shared_memory ? "local socket and shared memory" : "TCP",
              FLAGS_idle_connections, FLAGS_slow_senders);
  std::printf("%-8s %12s %12s %14s %14s %10s\n", "ps", "round med ms", "round max ms",
              "new client med", "new client max", "ps threads");
  PS_ASSIGN_OR_RETURN(Figures quiet, Measure(ps.ports(), connected.get()));
  std::printf("%-8s %12.3f %12.3f %14.2f %14.2f %10d\n", "quiet", quiet.round_median,
              quiet.round_max, quiet.new_median, quiet.new_max, Threads(pid));
  std::fflush(stdout);
  Flood flood;
  PS_RETURN_IF_ERROR(flood.Start(info.tensor_port()));
  PS_ASSIGN_OR_RETURN(Figures flooded, Measure(ps.ports(), connected.get()));
  std::printf("%-8s %12.3f %12.3f %14.2f %14.2f %10d\n", "flooded", flooded.round_median,
              flooded.round_max, flooded.new_median, flooded.new_max, Threads(pid));
  std::printf("slow senders cut off by the ps: %d\n", flood.cut_off());
  ps.Stop();
  std::filesystem::remove_all(dir);
  return OkStatus();
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitTaskMain(
      "channel_flood_bench [--idle_connections=1000] [--slow_senders=20] [--shared_memory]\n"
      "Push + pull through a ps_server process quiet and under a flood on its tensor port: an\n"
      "established client's rounds, a new client's first round, the ps's threads.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
