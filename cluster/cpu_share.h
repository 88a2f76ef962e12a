// How many threads a task's computation (oneDNN's OpenMP pool) should use:
// the CPUs it may run on, its affinity mask and its cgroup's CPU quota (as a
// Kubernetes pod's limit sets it), shared equally among the cluster's
// workers on its host. Two OpenMP pools that together ask for more threads
// than there are CPUs spin against each other and run far slower than one
// pool of the right size.
#ifndef PSTRAIN_CLUSTER_CPU_SHARE_H_
#define PSTRAIN_CLUSTER_CPU_SHARE_H_

#include <functional>
#include <string>

#include "cluster/cluster_spec.h"
#include "core/status.h"

namespace pstrain {
namespace cluster {

struct CpuBudget {
  int affinity_cpus = 1;  // CPUs in this process's affinity mask
  double quota_cpus = 0;  // the cgroup's quota over its period; 0: no quota
  // min(affinity_cpus, quota_cpus rounded up), at least 1.
  int Usable() const;
};

// The CPUs of a cgroup v2 "cpu.max" file ("150000 100000" is 1.5; "max
// 100000" is no quota, 0). InvalidArgument for anything else.
StatusOr<double> ParseCgroupV2CpuMax(const std::string& text);

// The same from cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us (a
// quota of -1 is no quota).
StatusOr<double> ParseCgroupV1Quota(const std::string& quota_text, const std::string& period_text);

// This process's budget: sched_getaffinity, and the quota of its cgroup
// under `cgroup_root` (v2: the cgroup named in /proc/self/cgroup, else the
// root's cpu.max; v1: cpu/cpu.cfs_quota_us). A file that cannot be read or
// parsed means no quota.
CpuBudget ReadCpuBudget(const std::string& cgroup_root = "/sys/fs/cgroup");

// The host part of "host:port" ("[::1]:80" -> "::1"); the loopback names
// (localhost, 127.x.y.z, ::1) all become "localhost".
std::string HostOf(const std::string& address);

// The workers of the spec on `task`'s host, counting `task` itself if it
// is one; 0 when the task is not in the spec (an evaluator outside it).
int WorkersOnHostOf(const ClusterSpec& spec, const TaskId& task);

struct ThreadChoice {
  int threads = 1;
  std::string why;  // for the log: where the number came from
};

// The compute threads for `config`'s task: `flag` when positive (the user's
// --intra_op_threads), else OMP_NUM_THREADS's value when `omp_env` holds a
// positive number, else budget.Usable() / WorkersOnHostOf(...), at least 1.
ThreadChoice ChooseComputeThreads(int flag, const char* omp_env, const CpuBudget& budget,
                                  const ClusterConfig& config);

// The priority of a chief's or evaluator's evaluation: where the workers on
// its host take every usable CPU (each at its default share,
// budget.Usable() / workers), idle (SCHED_IDLE, core/thread_priority.h): it
// runs on what training leaves instead of taking training's cores. Else,
// and for a task with no worker beside it, normal.
struct PriorityChoice {
  bool idle = false;
  std::string why;  // for the log
};
PriorityChoice ChooseEvaluationPriority(const CpuBudget& budget, const ClusterConfig& config);

// The priority of a worker's input pipeline (the threads that read and
// preprocess its examples): idle where it computes on the CPU and the
// workers on its host, at `compute_threads` each, take every usable CPU.
// A pipeline thread that wakes beside such a computation takes a CPU from
// one of its OpenMP threads, and the whole team waits at the next barrier;
// at idle priority it prepares the batches ahead in what training leaves
// (the waits for the ps). Normal where CPUs are left over, and for GPU
// towers, whose CPU threads mostly wait on the GPU.
PriorityChoice ChooseInputPriority(int compute_threads, bool computes_on_gpu,
                                   const CpuBudget& budget, const ClusterConfig& config);

// A priority flag's choice (--eval_priority, --input_priority): idle or
// normal as `value` says, or for "auto" what `automatic` chooses.
// InvalidArgument naming `flag` for any other value.
StatusOr<PriorityChoice> ParsePriorityFlag(const std::string& flag, const std::string& value,
                                           const std::function<PriorityChoice()>& automatic);

}  // namespace cluster
}  // namespace pstrain

#endif  // PSTRAIN_CLUSTER_CPU_SHARE_H_
