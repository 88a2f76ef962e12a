// status_page_demo: serves the chief's monitoring endpoint filled with a
// made-up training run (2 ps, 2 workers, one of them dead), advancing once a
// second, so the status page can be looked at without a cluster.
// tests/browser/check_status_page.sh drives it with headless Chromium.
//
//   status_page_demo --port=0 --port_file=/tmp/port   # runs until SIGTERM/SIGINT
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

#include <gflags/gflags.h>
#include <glog/logging.h>

#include "chief/http/http_server.h"
#include "chief/http/metrics.h"
#include "core/stop_signals.h"

DEFINE_string(host, "127.0.0.1", "address to listen on");
DEFINE_int32(port, 0, "port to listen on; 0 picks a free one");
DEFINE_string(port_file, "", "if set, the chosen port is written here once serving");

namespace pstrain {
namespace {

constexpr int kStepsPerPoint = 50;
constexpr size_t kMaxHistory = 500;

// A noisy loss that decays from about 2.3 (ln 10) towards 0.35.
double FakeLoss(int64_t step, std::mt19937* rng) {
  std::normal_distribution<double> noise(0.0, 0.06);
  const double mean = 0.35 + 1.95 * std::exp(-static_cast<double>(step) / 2500.0);
  return std::max(0.05, mean * (1.0 + noise(*rng)));
}

ChiefMetrics FakeRun(std::mt19937* rng) {
  ChiefMetrics m;
  m.model = "cifar10";
  m.mode = "sync 2/2";
  m.train_dir = "runs/cifar10-demo";
  m.learning_rate = 0.1;
  m.steps_per_sec = 23.4;
  m.examples_per_sec = 23.4 * 128;
  m.stale_gradients_dropped = 17;
  m.restores = 1;
  m.seconds_since_checkpoint = 42;
  m.uptime_secs = 3 * 3600 + 25 * 60 + 7;
  m.tasks = {
      {"ps:0", "running", "4.7 MB in 6 variables; restored at step 6,000"},
      {"ps:1", "running", "4.6 MB in 4 variables"},
      {"worker:0", "running", "last heartbeat 0.4 s ago"},
      {"worker:1", "dead", "no heartbeat for 31 s; its share goes to worker:0"},
  };
  for (int i = 1; i <= 200; ++i) {
    const int64_t step = static_cast<int64_t>(i) * kStepsPerPoint;
    m.loss_history.push_back({step, FakeLoss(step, rng)});
  }
  m.global_step = m.loss_history.back().step;
  m.loss = m.loss_history.back().loss;
  return m;
}

// One more point of progress, as the supervisor would publish it.
void Advance(ChiefMetrics* m, std::mt19937* rng) {
  m->global_step += kStepsPerPoint;
  m->loss = FakeLoss(m->global_step, rng);
  m->loss_history.push_back({m->global_step, m->loss});
  if (m->loss_history.size() > kMaxHistory) m->loss_history.erase(m->loss_history.begin());
  m->uptime_secs += 1;
  m->seconds_since_checkpoint += 1;
  m->learning_rate = 0.1 * std::pow(0.96, static_cast<double>(m->global_step) / 1000.0);
}

int Main() {
  StopNotice stop;
  HandleStopSignals(&stop);

  std::mt19937 rng(7);
  ChiefMetrics metrics = FakeRun(&rng);
  MetricsBoard board;
  board.Publish(metrics);

  StatusOr<std::unique_ptr<HttpServer>> server = HttpServer::Start(FLAGS_host, FLAGS_port, &board);
  if (!server.ok()) {
    LOG(ERROR) << server.status().ToString();
    return 1;
  }
  if (!FLAGS_port_file.empty()) {
    std::ofstream(FLAGS_port_file) << (*server)->port() << "\n";
  }
  std::printf("status page: http://%s:%d/\n", FLAGS_host.c_str(), (*server)->port());
  std::fflush(stdout);

  while (!stop.WaitFor(std::chrono::seconds(1))) {
    Advance(&metrics, &rng);
    board.Publish(metrics);
  }
  LOG(INFO) << "stopping: " << stop.reason();
  (*server)->Stop();
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  google::InitGoogleLogging(argv[0]);
  return pstrain::Main();
}
