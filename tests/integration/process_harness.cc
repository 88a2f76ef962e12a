#include "tests/integration/process_harness.h"

#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

#include "deploy/local/free_ports.h"

namespace pstrain {
namespace testing {

std::string BuildDir() {
  const char* dir = std::getenv("PSTRAIN_BIN_DIR");
  if (dir != nullptr && dir[0] != '\0') return dir;
  return std::filesystem::canonical("/proc/self/exe").parent_path().parent_path();
}

TempDir::TempDir(const std::string& tag) {
  path_ = (std::filesystem::temp_directory_path() /
           ("pstrain_" + tag + "_" + std::to_string(getpid())))
              .string();
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

LocalSpec MakeLocalSpec(const std::string& dir, int num_ps, int num_workers) {
  auto ports = PickFreePorts("127.0.0.1", 1 + num_ps + num_workers);
  LocalSpec out;
  auto addr = [&](int i) { return "127.0.0.1:" + std::to_string((*ports)[i]); };
  out.spec.jobs["chief"] = {addr(0)};
  for (int i = 0; i < num_ps; ++i) out.spec.jobs["ps"].push_back(addr(1 + i));
  for (int i = 0; i < num_workers; ++i) out.spec.jobs["worker"].push_back(addr(1 + num_ps + i));
  out.path = dir + "/cluster.json";
  std::ofstream f(out.path);
  f << "{";
  bool first_job = true;
  for (const auto& [job, addrs] : out.spec.jobs) {
    f << (first_job ? "" : ", ") << "\"" << job << "\": [";
    for (size_t i = 0; i < addrs.size(); ++i) f << (i ? ", " : "") << "\"" << addrs[i] << "\"";
    f << "]";
    first_job = false;
  }
  f << "}\n";
  return out;
}

RunningTask::RunningTask(const std::string& name, const std::vector<std::string>& argv) {
  auto p = TaskProcess::Spawn(name, argv);
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
                            std::string* output) {
  RunningTask task("cmd", argv);
  bool exited = task.WaitForExit(timeout);
  *output = task.output();
  if (!exited) return "timeout";
  return task.process()->exit_description();
}

}  // namespace testing
}  // namespace pstrain
