// What the benchmarks that run real ps_server processes share: starting and
// stopping them on loopback, and CPU accounting from /proc (this process,
// its ps children, the whole machine).
#ifndef PSTRAIN_BENCH_PS_PROCESSES_H_
#define PSTRAIN_BENCH_PS_PROCESSES_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cluster/cluster_spec.h"
#include "core/status.h"
#include "deploy/local/free_ports.h"
#include "deploy/local/task_process.h"

namespace pstrain {
namespace bench {

using Clock = std::chrono::steady_clock;

// `flag` when set, else <build>/ps/ps_server found from this binary's path
// <build>/bench/NAME.
std::string PsServerPath(const std::string& flag);

// utime + stime of /proc/<pid>/stat in seconds ("self" for this process);
// ppid and comm (may be null) get the parent and the command name. Negative
// when unreadable.
double ProcessCpuSec(const std::string& pid, int* ppid, std::string* comm);

// What /proc says of a process now: its threads, resident memory and open
// descriptors; all -1 when it cannot be read.
struct ProcessResources {
  int threads = -1;
  int64_t rss_bytes = -1;
  int descriptors = -1;
};
ProcessResources ReadProcessResources(int pid);

// A flag's comma-separated integers ("1,2,4"), each in [lo, hi]:
// InvalidArgument naming the flag and the bad entry, or an empty list.
StatusOr<std::vector<int>> ParseIntList(const std::string& flag, const std::string& text, int lo,
                                        int hi);

// The 1-minute load average.
double LoadAverage1();

// CPU seconds of this process and of its ps_server children, and the whole
// machine's busy and total jiffies, at one moment.
struct CpuSample {
  Clock::time_point when;
  double self_sec, ps_sec;
  uint64_t busy, total;
};
CpuSample SampleCpu();

// ps_server processes on free loopback ports, their output drained by one
// thread (copied to stderr with show_output), killed on destruction.
class PsProcesses {
 public:
  ~PsProcesses() { Stop(); }

  // extra_args go to every ps_server (say, --tensor_port=-1). The ps
  // tasks listen on `host`, where their ports are held until they bind
  // them: 0.0.0.0 for clients that dial other loopback addresses
  // (SpecFor's loopback_host).
  Status Start(const std::string& binary, int num_ps, const std::string& dir,
               bool show_output = false, const std::vector<std::string>& extra_args = {},
               const std::string& host = "127.0.0.1");
  // Another task beside the ps tasks (a chief), drained and waited for
  // with them; returns its process id.
  StatusOr<int> AddTask(const std::string& name, const std::vector<std::string>& argv);
  // Kills ps `index` (SIGKILL) and starts it again, empty, on its port,
  // as a restarted pod would be; the killed process does not count against
  // AllSucceeded.
  Status RestartPs(int index);
  const std::vector<int>& ports() const { return reserved_.ports(); }
  // Each ps process's id, in task order.
  std::vector<int> pids() const;
  // True when every process has exited within `timeout`.
  bool WaitForExit(std::chrono::seconds timeout);
  // Every process has exited, each with code 0.
  bool AllSucceeded() const { return all_exited_.load() && all_succeeded_.load(); }
  // Stops draining; kills what still runs.
  void Stop();
  std::string Output();
  std::string ExitDescriptions();

 private:
  void Drain();

  bool show_output_ = false;
  ReservedPorts reserved_;  // held while the ps tasks run
  int num_ps_ = 0;
  std::vector<std::vector<std::string>> ps_argv_;    // each ps's command line
  std::vector<int> ps_at_;                           // each ps's place in procs_; under mu_
  std::vector<std::unique_ptr<TaskProcess>> procs_;  // the ps tasks first; under mu_
  std::vector<bool> killed_;                         // by RestartPs, per procs_; under mu_
  std::thread drainer_;
  std::atomic<bool> done_{false}, all_exited_{false}, all_succeeded_{false};
  mutable std::mutex mu_;
  std::string output_, exits_;
};

// A spec of ps tasks at 127.0.0.<loopback_host>:<port>.
cluster::ClusterSpec SpecFor(const std::vector<int>& ports, int loopback_host);

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_PS_PROCESSES_H_
