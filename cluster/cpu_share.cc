#include "cluster/cpu_share.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace pstrain {
namespace cluster {
namespace {

bool ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

// A whole decimal number, surrounding white space allowed.
bool ParseInt(const std::string& text, long long* v) {
  std::istringstream in(text);
  std::string rest;
  return static_cast<bool>(in >> *v) && !(in >> rest);
}

// The cgroup v2 path of this process ("0::/kubepods/pod1/abc" -> that path).
std::string OwnCgroupV2Path() {
  std::string text;
  if (!ReadFile("/proc/self/cgroup", &text)) return "";
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

}  // namespace

int CpuBudget::Usable() const {
  int usable = std::max(1, affinity_cpus);
  if (quota_cpus > 0) usable = std::min(usable, static_cast<int>(std::ceil(quota_cpus)));
  return std::max(1, usable);
}

StatusOr<double> ParseCgroupV2CpuMax(const std::string& text) {
  std::istringstream in(text);
  std::string quota, period, rest;
  if (!(in >> quota >> period) || (in >> rest)) {
    return InvalidArgument("cpu.max: expected \"QUOTA PERIOD\", got \"" + text + "\"");
  }
  long long p = 0, q = 0;
  if (!ParseInt(period, &p) || p <= 0) {
    return InvalidArgument("cpu.max: bad period \"" + period + "\"");
  }
  if (quota == "max") return 0.0;
  if (!ParseInt(quota, &q) || q <= 0) {
    return InvalidArgument("cpu.max: bad quota \"" + quota + "\"");
  }
  return static_cast<double>(q) / static_cast<double>(p);
}

StatusOr<double> ParseCgroupV1Quota(const std::string& quota_text, const std::string& period_text) {
  long long q = 0, p = 0;
  if (!ParseInt(quota_text, &q) || q == 0 || q < -1) {
    return InvalidArgument("cpu.cfs_quota_us: bad value \"" + quota_text + "\"");
  }
  if (q == -1) return 0.0;
  if (!ParseInt(period_text, &p) || p <= 0) {
    return InvalidArgument("cpu.cfs_period_us: bad value \"" + period_text + "\"");
  }
  return static_cast<double>(q) / static_cast<double>(p);
}

CpuBudget ReadCpuBudget(const std::string& cgroup_root) {
  CpuBudget budget;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) budget.affinity_cpus = CPU_COUNT(&set);
  std::string text, period;
  const std::string own = OwnCgroupV2Path();
  for (const std::string& dir : {cgroup_root + own, cgroup_root}) {
    if (ReadFile(dir + "/cpu.max", &text)) {
      auto cpus = ParseCgroupV2CpuMax(text);
      if (cpus.ok()) budget.quota_cpus = *cpus;
      return budget;
    }
  }
  if (ReadFile(cgroup_root + "/cpu/cpu.cfs_quota_us", &text) &&
      ReadFile(cgroup_root + "/cpu/cpu.cfs_period_us", &period)) {
    auto cpus = ParseCgroupV1Quota(text, period);
    if (cpus.ok()) budget.quota_cpus = *cpus;
  }
  return budget;
}

std::string HostOf(const std::string& address) {
  const std::string host = AddressHost(address);
  if (host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0) return "localhost";
  return host;
}

int WorkersOnHostOf(const ClusterSpec& spec, const TaskId& task) {
  if (task.index < 0 || task.index >= spec.NumTasks(task.job)) return 0;
  const std::string host = HostOf(spec.Address(task.job, task.index));
  int workers = 0;
  for (int w = 0; w < spec.NumTasks("worker"); ++w) {
    if (HostOf(spec.Address("worker", w)) == host) ++workers;
  }
  return workers;
}

ThreadChoice ChooseComputeThreads(int flag, const char* omp_env, const CpuBudget& budget,
                                  const ClusterConfig& config) {
  if (flag > 0) return {flag, "--intra_op_threads"};
  long long env = 0;
  if (omp_env != nullptr && ParseInt(omp_env, &env) && env > 0) {
    return {static_cast<int>(std::min<long long>(env, 1024)), "OMP_NUM_THREADS"};
  }
  const int usable = budget.Usable();
  const int sharing = std::max(1, WorkersOnHostOf(config.spec, config.task));
  std::ostringstream why;
  why << usable << " usable CPU" << (usable == 1 ? "" : "s") << " (affinity "
      << budget.affinity_cpus << ", ";
  if (budget.quota_cpus > 0) {
    why << "cgroup quota " << budget.quota_cpus << ")";
  } else {
    why << "no cgroup quota)";
  }
  why << " shared by " << sharing << " worker" << (sharing == 1 ? "" : "s") << " on this host";
  return {std::max(1, usable / sharing), why.str()};
}

namespace {

// Idle where `workers` on this host computing on `threads_each` take every
// usable CPU; `what` runs on what they leave.
PriorityChoice IdleWhereWorkersTakeEveryCpu(int workers, int threads_each, int usable,
                                            const std::string& what) {
  std::ostringstream why;
  why << workers << " worker" << (workers == 1 ? "" : "s") << " on this host compute"
      << (workers == 1 ? "s" : "") << " on " << threads_each << " thread"
      << (threads_each == 1 ? "" : "s") << (workers == 1 ? "" : " each") << " of " << usable
      << " usable CPU" << (usable == 1 ? "" : "s");
  if (int64_t{workers} * threads_each < usable) {
    why << ", leaving " << usable - workers * threads_each;
    return {false, why.str()};
  }
  why << ": " << what << " runs on what training leaves";
  return {true, why.str()};
}

}  // namespace

PriorityChoice ChooseEvaluationPriority(const CpuBudget& budget, const ClusterConfig& config) {
  if (config.task.job == "worker") return {false, "a worker's own"};
  const int workers = WorkersOnHostOf(config.spec, config.task);
  if (workers == 0) return {false, "no worker on this host"};
  const int usable = budget.Usable();
  return IdleWhereWorkersTakeEveryCpu(workers, std::max(1, usable / workers), usable, "evaluation");
}

PriorityChoice ChooseInputPriority(int compute_threads, bool computes_on_gpu,
                                   const CpuBudget& budget, const ClusterConfig& config) {
  if (computes_on_gpu) return {false, "it computes on GPUs"};
  // A worker outside the spec (none here) still computes on this host.
  const int workers = std::max(1, WorkersOnHostOf(config.spec, config.task));
  return IdleWhereWorkersTakeEveryCpu(workers, std::max(1, compute_threads), budget.Usable(),
                                      "input");
}

StatusOr<PriorityChoice> ParsePriorityFlag(const std::string& flag, const std::string& value,
                                           const std::function<PriorityChoice()>& automatic) {
  if (value == "auto") return automatic();
  if (value == "idle" || value == "normal") return PriorityChoice{value == "idle", flag};
  return InvalidArgument(flag + " must be auto, idle or normal, got \"" + value + "\"");
}

}  // namespace cluster
}  // namespace pstrain
