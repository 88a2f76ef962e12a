#include "tests/integration/process_harness.h"

#include <glog/logging.h>
#include <poll.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "cluster/cluster_spec.h"
#include "deploy/local/free_ports.h"
#include "ps/rpc/ps_client.h"

namespace pstrain {
namespace testing {

std::string BuildDir() {
  const char* dir = std::getenv("PSTRAIN_BIN_DIR");
  if (dir != nullptr && dir[0] != '\0') return dir;
  return std::filesystem::canonical("/proc/self/exe").parent_path().parent_path();
}

TempDir::TempDir(const std::string& tag) {
  path_ =
      (std::filesystem::temp_directory_path() / ("pstrain_" + tag + "_" + std::to_string(getpid())))
          .string();
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

LocalSpec MakeLocalSpec(const std::string& dir, int num_ps, int num_workers) {
  auto ports = ReservedPorts::Reserve("127.0.0.1", 1 + num_ps + num_workers);
  CHECK(ports.ok()) << ports.status().ToString();
  LocalSpec out;
  out.ports = std::move(ports).value();
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string(out.ports.ports()[i]); };
  out.spec.jobs["chief"] = {addr(0)};
  for (int i = 0; i < num_ps; ++i) out.spec.jobs["ps"].push_back(addr(1 + i));
  for (int i = 0; i < num_workers; ++i) out.spec.jobs["worker"].push_back(addr(1 + num_ps + i));
  out.path = dir + "/cluster.json";
  const Status written = cluster::WriteClusterSpec(out.spec, out.path);
  CHECK(written.ok()) << written.ToString();
  return out;
}

RunningTask::RunningTask(const std::string& name, const std::vector<std::string>& argv,
                         const std::vector<std::string>& env) {
  auto p = TaskProcess::Spawn(name, argv, env);
  if (p.ok()) process_ = std::move(p).value();
}

bool RunningTask::running() {
  if (!process_) return false;
  process_->DrainOutput(&output_);
  return !process_->PollExit();
}

bool RunningTask::WaitForExit(std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    pollfd p{process_->output_fd(), POLLIN, 0};
    if (p.fd >= 0) {
      ::poll(&p, 1, 100);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  while (process_->DrainOutput(&output_)) {
  }
  return true;
}

std::string RunToCompletion(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                            std::string* output, const std::vector<std::string>& env) {
  RunningTask task("cmd", argv, env);
  bool exited = task.WaitForExit(timeout);
  *output = task.output();
  if (!exited) return "timeout";
  return task.process()->exit_description();
}

TestCluster::TestCluster(const std::string& dir, int num_ps, int num_workers,
                         std::vector<std::string> flags)
    : spec_(MakeLocalSpec(dir, num_ps, num_workers)), flags_(std::move(flags)) {}

TestCluster::~TestCluster() = default;

std::vector<std::string> TestCluster::Argv(const std::string& task) const {
  const size_t colon = task.find(':');
  const std::string job = task.substr(0, colon);
  const std::string bin = job == "ps" ? "/ps/ps_server" : "/" + job + "/" + job;
  std::vector<std::string> argv = {BuildDir() + bin, "--cluster_spec=" + spec_.path, "--job=" + job,
                                   "--task=" + task.substr(colon + 1)};
  std::string undefok;
  for (const std::string& f : flags_) {
    argv.push_back(f);
    std::string name =
        f.substr(2, f.find('=') == std::string::npos ? std::string::npos : f.find('=') - 2);
    undefok += (undefok.empty() ? "" : ",") + name;
  }
  if (!undefok.empty()) argv.push_back("--undefok=" + undefok);
  return argv;
}

void TestCluster::StartAll() {
  for (int i = 0; i < spec_.spec.NumTasks("ps"); ++i) Start("ps:" + std::to_string(i));
  Start("chief:0");
  for (int i = 0; i < spec_.spec.NumTasks("worker"); ++i) Start("worker:" + std::to_string(i));
}

void TestCluster::Start(const std::string& task, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = Argv(task);
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto it = tasks_.find(task);
  if (it != tasks_.end()) {
    it->second->WaitForExit(std::chrono::seconds(10));
    past_output_[task] += it->second->output();
  }
  // As pstrain_local does: workers share the cores instead of each spinning
  // an OpenMP pool over all of them.
  std::vector<std::string> env;
  if (task.rfind("worker:", 0) == 0) env.push_back("OMP_NUM_THREADS=1");
  tasks_[task] = std::make_unique<RunningTask>(task, argv, env);
}

void TestCluster::Kill9(const std::string& task) {
  RunningTask* t = tasks_.at(task).get();
  t->process()->Signal(SIGKILL);
  t->WaitForExit(std::chrono::seconds(10));
}

std::string TestCluster::Output(const std::string& task) {
  auto it = tasks_.find(task);
  if (it != tasks_.end()) it->second->running();  // collects what is pending
  return past_output_[task] + (it == tasks_.end() ? "" : it->second->output());
}

std::string TestCluster::Tails(size_t lines) {
  std::string report;
  for (const auto& entry : tasks_) {
    const std::string out = Output(entry.first);
    size_t start = out.size();
    for (size_t seen = 0; start > 0 && seen <= lines; --start) {
      if (out[start - 1] == '\n') ++seen;
    }
    report += "== " + entry.first + " ==\n" + out.substr(start) + "\n";
  }
  return report;
}

bool TestCluster::WaitForExit(const std::string& task, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (tasks_.at(task)->running()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    for (auto& [name, t] : tasks_) t->running();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::string TestCluster::WaitForJobEnd(std::chrono::seconds chief_timeout) {
  if (!WaitForExit("chief:0", chief_timeout)) return "the chief did not exit\n" + Tails();
  std::string failures;
  for (auto& [name, t] : tasks_) {
    if (!WaitForExit(name, name == "chief:0" ? chief_timeout : std::chrono::seconds(60))) {
      failures += name + " did not exit\n" + Tails();
    } else if (!t->process()->succeeded()) {
      failures += name + ": " + t->process()->exit_description() + "\n" + Output(name);
    }
  }
  return failures;
}

bool TestCluster::WaitForStep(int64_t step, std::chrono::seconds timeout) {
  return WaitForPs0(
      [step](const proto::StatusResponse& st) { return st.ready() && st.global_step() >= step; },
      timeout);
}

bool TestCluster::WaitForPs0(const std::function<bool(const proto::StatusResponse&)>& done,
                             std::chrono::seconds timeout) {
  PsClient ps0(0, spec_.spec.Address("ps", 0));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& [name, t] : tasks_) t->running();  // keep the pipes drained
    auto st = ps0.GetStatus(std::chrono::seconds(1));
    if (st.ok() && done(*st)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

int ThreadsOf(RunningTask* task) {
  std::ifstream status("/proc/" + std::to_string(task->process()->pid()) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  }
  return -1;
}

bool HaveFashionMnist() {
  return std::filesystem::exists("/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz");
}

double FinalAccuracy(const std::string& chief_output) {
  std::smatch m;
  if (!std::regex_search(chief_output, m,
                         std::regex(R"(final: step \d+, test accuracy (0\.\d{4}))"))) {
    return -1;
  }
  return std::stod(m[1]);
}

}  // namespace testing
}  // namespace pstrain
