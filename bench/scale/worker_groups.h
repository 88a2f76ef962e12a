// WorkerGroups: the simulated workers of one scale_bench point, run in
// child processes of the benchmark (each a group of threads,
// bench/scale/simulated_worker.h), so that a thousand workers' connections
// to many ps tasks fit each process's descriptor limit.
//
// The parent drives them with signals (SIGUSR1: start the measured window,
// SIGUSR2: end it and report, SIGTERM: stop, report done to the ps, and
// exit) and reads what they report from their output, one line each, from
// ReportLine.
#ifndef PSTRAIN_BENCH_SCALE_WORKER_GROUPS_H_
#define PSTRAIN_BENCH_SCALE_WORKER_GROUPS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/status.h"
#include "deploy/local/task_process.h"

namespace pstrain {
namespace bench {

// What a group is told to run.
struct GroupSpec {
  int first = 0, count = 0;  // worker indexes [first, first + count)
  std::vector<int> ps_ports;
  std::string model_spec;  // the ModelSpec file the chief trains
  bool sync = false;
  std::chrono::milliseconds compute{0};  // each step's pause in place of computing
  // With an embedding table in the model: ids a step draws, and their
  // power law's exponent (SimulatedWorker::Options).
  int ids_per_step = 1024;
  double zipf_s = 1.05;
};

// The child's side: runs the group until SIGTERM, reporting on stdout.
// Returns the process's exit code.
int RunWorkerGroup(const GroupSpec& spec);

class WorkerGroups {
 public:
  // `groups` processes of `self` (this benchmark's binary) share the
  // workers [0, workers); `args(spec)` makes a child's command line
  // (after argv[0]).
  static StatusOr<std::unique_ptr<WorkerGroups>> Start(
      const std::string& self, int groups, const GroupSpec& all, bool show_output,
      const std::function<std::vector<std::string>(const GroupSpec&)>& args);
  ~WorkerGroups();

  // Workers past their first pull, and those that have had a push
  // applied, as last reported.
  int pulled() const;
  int stepped() const;
  // The measured window, all groups together.
  struct Window {
    int64_t pushes = 0;             // pushes applied
    int64_t rows = 0;               // embedding rows they carried
    std::vector<double> cycles_ms;  // each cycle's ms (pull + push)
  };
  void StartWindow();
  Status EndWindow(std::chrono::seconds timeout, Window* out);
  // Kills group `g` (SIGKILL): its workers vanish as crashed processes do,
  // without reporting done. Not counted by stepped, EndWindow or Stop.
  void Kill(int g);
  int groups() const { return static_cast<int>(procs_.size()); }
  // Stops every worker (each reports done to ps:0) and waits for the
  // groups to exit; the calls that failed, by code, and a message of each.
  Status Stop(std::chrono::seconds timeout, std::map<std::string, int64_t>* errors,
              std::map<std::string, std::string>* examples);

 private:
  WorkerGroups() = default;
  void Drain();
  // One line of a group's output.
  void Take(int group, const std::string& line);
  void SignalAll(int signo);
  // The sum over the groups not killed.
  int Live(const std::vector<int>& per_group) const;

  bool show_output_ = false;
  std::vector<std::unique_ptr<TaskProcess>> procs_;
  std::thread drainer_;
  std::atomic<bool> done_{false};
  std::atomic<bool> exited_{false};  // every group exited, its output read
  mutable std::mutex mu_;
  std::vector<int> pulled_, stepped_;
  std::vector<bool> windowed_, ended_, killed_;
  Window window_;
  std::map<std::string, int64_t> errors_;
  std::map<std::string, std::string> examples_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_SCALE_WORKER_GROUPS_H_
