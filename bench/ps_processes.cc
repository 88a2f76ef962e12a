#include "bench/ps_processes.h"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "cluster/cluster_spec.h"

namespace pstrain {
namespace bench {

std::string PsServerPath(const std::string& flag) {
  if (!flag.empty()) return flag;
  const auto exe = std::filesystem::canonical("/proc/self/exe");
  return (exe.parent_path().parent_path() / "ps" / "ps_server").string();
}

namespace {

double TicksToSec(uint64_t ticks) {
  static const double hz = static_cast<double>(sysconf(_SC_CLK_TCK));
  return ticks / hz;
}

}  // namespace

double ProcessCpuSec(const std::string& pid, int* ppid, std::string* comm) {
  std::ifstream f("/proc/" + pid + "/stat");
  std::string line;
  if (!std::getline(f, line)) return -1;
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return -1;
  if (comm != nullptr) *comm = line.substr(open + 1, close - open - 1);
  std::stringstream rest(line.substr(close + 2));
  std::vector<std::string> fields;  // fields[0] is field 3 (state)
  std::string x;
  while (rest >> x) fields.push_back(x);
  if (fields.size() < 13) return -1;
  if (ppid != nullptr) *ppid = std::atoi(fields[1].c_str());
  return TicksToSec(std::strtoull(fields[11].c_str(), nullptr, 10) +
                    std::strtoull(fields[12].c_str(), nullptr, 10));
}

namespace {

double ChildrenPsCpuSec() {
  double total = 0;
  const int me = getpid();
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    int ppid = 0;
    std::string comm;
    double cpu = ProcessCpuSec(name, &ppid, &comm);
    if (cpu >= 0 && ppid == me && comm == "ps_server") total += cpu;
  }
  return total;
}

// Busy and total jiffies of the whole machine (all cores), from /proc/stat.
std::pair<uint64_t, uint64_t> MachineJiffies() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  f >> cpu;
  uint64_t v, total = 0, idle = 0;
  for (int i = 0; i < 8 && (f >> v); ++i) {
    total += v;
    if (i == 3 || i == 4) idle += v;  // idle, iowait
  }
  return {total - idle, total};
}

}  // namespace

ProcessResources ReadProcessResources(int pid) {
  ProcessResources r;
  const std::string dir = "/proc/" + std::to_string(pid);
  std::ifstream status(dir + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) r.threads = std::atoi(line.c_str() + 8);
    if (line.rfind("VmRSS:", 0) == 0) r.rss_bytes = std::atoll(line.c_str() + 6) * 1024;
  }
  std::error_code ec;
  int fds = 0;
  for (auto it = std::filesystem::directory_iterator(dir + "/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) r.descriptors = fds;
  return r;
}

StatusOr<std::vector<int>> ParseIntList(const std::string& flag, const std::string& text, int lo,
                                        int hi) {
  std::vector<int> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (*end != '\0' || v < lo || v > hi) {
      return InvalidArgument("--" + flag + ": bad entry '" + item + "' (want " +
                             std::to_string(lo) + ".." + std::to_string(hi) + ")");
    }
    out.push_back(static_cast<int>(v));
  }
  if (out.empty()) return InvalidArgument("--" + flag + " is empty");
  return out;
}

double LoadAverage1() {
  std::ifstream f("/proc/loadavg");
  double l = 0;
  f >> l;
  return l;
}

CpuSample SampleCpu() {
  CpuSample s;
  s.when = Clock::now();
  s.self_sec = ProcessCpuSec("self", nullptr, nullptr);
  s.ps_sec = ChildrenPsCpuSec();
  std::tie(s.busy, s.total) = MachineJiffies();
  return s;
}

std::vector<int> PsProcesses::pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> out;
  for (int i = 0; i < num_ps_; ++i) out.push_back(static_cast<int>(procs_[ps_at_[i]]->pid()));
  return out;
}

Status PsProcesses::Start(const std::string& binary, int num_ps, const std::string& dir,
                          bool show_output, const std::vector<std::string>& extra_args,
                          const std::string& host) {
  show_output_ = show_output;
  PS_ASSIGN_OR_RETURN(reserved_, ReservedPorts::Reserve(host, num_ps));
  const std::string spec_path = dir + "/cluster.json";
  cluster::ClusterSpec spec;
  for (int i = 0; i < num_ps; ++i)
    spec.jobs["ps"].push_back("127.0.0.1:" + std::to_string(ports()[i]));
  PS_RETURN_IF_ERROR(cluster::WriteClusterSpec(spec, spec_path));
  for (int i = 0; i < num_ps; ++i) {
    // On the address whose ports are held, as the launcher does: a port
    // free on 127.0.0.1 may be taken on another loopback address (a
    // client's socket bound there), where a bind on every address fails.
    std::vector<std::string> argv = {binary, "--cluster_spec=" + spec_path, "--job=ps",
                                     "--task=" + std::to_string(i), "--listen_host=" + host};
    argv.insert(argv.end(), extra_args.begin(), extra_args.end());
    PS_ASSIGN_OR_RETURN(auto p, TaskProcess::Spawn("ps:" + std::to_string(i), argv));
    procs_.push_back(std::move(p));
    killed_.push_back(false);
    ps_at_.push_back(i);
    ps_argv_.push_back(std::move(argv));
  }
  num_ps_ = num_ps;
  drainer_ = std::thread([this] { Drain(); });
  return OkStatus();
}

StatusOr<int> PsProcesses::AddTask(const std::string& name, const std::vector<std::string>& argv) {
  PS_ASSIGN_OR_RETURN(auto p, TaskProcess::Spawn(name, argv));
  const int pid = static_cast<int>(p->pid());
  std::lock_guard<std::mutex> lock(mu_);
  procs_.push_back(std::move(p));
  killed_.push_back(false);
  all_exited_.store(false);
  return pid;
}

Status PsProcesses::RestartPs(int index) {
  pid_t old_pid;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const int at = ps_at_[index];
    killed_[at] = true;
    old_pid = procs_[at]->pid();
  }
  // By pid: the drainer reaps it (and then reads it to the end).
  ::kill(old_pid, SIGKILL);
  // Its port is free for the new process once the old one is gone.
  while (::kill(old_pid, 0) == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  PS_ASSIGN_OR_RETURN(auto p, TaskProcess::Spawn("ps:" + std::to_string(index), ps_argv_[index]));
  std::lock_guard<std::mutex> lock(mu_);
  ps_at_[index] = static_cast<int>(procs_.size());
  procs_.push_back(std::move(p));
  killed_.push_back(false);
  all_exited_.store(false);
  return OkStatus();
}

bool PsProcesses::WaitForExit(std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (all_exited_.load()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return all_exited_.load();
}

void PsProcesses::Stop() {
  done_.store(true);
  if (drainer_.joinable()) drainer_.join();
  procs_.clear();
}

std::string PsProcesses::Output() {
  std::lock_guard<std::mutex> lock(mu_);
  return output_;
}

std::string PsProcesses::ExitDescriptions() {
  std::lock_guard<std::mutex> lock(mu_);
  return exits_;
}

void PsProcesses::Drain() {
  for (;;) {
    std::vector<TaskProcess*> procs;
    std::vector<bool> killed;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (auto& p : procs_) procs.push_back(p.get());
      killed = killed_;
    }
    std::vector<pollfd> fds;
    for (TaskProcess* p : procs) {
      if (p->output_fd() >= 0) fds.push_back({p->output_fd(), POLLIN, 0});
    }
    if (!fds.empty()) {
      ::poll(fds.data(), fds.size(), 50);
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::string got;
    bool all = true, succeeded = true;
    std::string exits;
    for (size_t i = 0; i < procs.size(); ++i) {
      TaskProcess* p = procs[i];
      p->DrainOutput(&got);
      if (!p->PollExit()) all = false;
      if (!p->succeeded() && !killed[i]) succeeded = false;
      exits += p->name() + ": " + p->exit_description() + "; ";
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      output_ += got;
      if (output_.size() > (1 << 20)) output_.erase(0, output_.size() - (1 << 19));
      exits_ = exits;
      // A task added meanwhile is not among those polled.
      if (all && procs.size() == procs_.size()) {
        all_succeeded_.store(succeeded);
        all_exited_.store(true);
      }
    }
    if (show_output_ && !got.empty()) std::fputs(got.c_str(), stderr);
    if (done_.load() || all_exited_.load()) return;
  }
}

cluster::ClusterSpec SpecFor(const std::vector<int>& ports, int loopback_host) {
  cluster::ClusterSpec spec;
  for (int port : ports) {
    spec.jobs["ps"].push_back("127.0.0." + std::to_string(loopback_host) + ":" +
                              std::to_string(port));
  }
  return spec;
}

}  // namespace bench
}  // namespace pstrain
