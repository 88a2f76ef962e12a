// Test harness for integration tests with real processes on loopback: finds
// the built binaries, picks free ports, writes a cluster spec, runs tasks and
// collects their output.
#ifndef PSTRAIN_TESTS_INTEGRATION_PROCESS_HARNESS_H_
#define PSTRAIN_TESTS_INTEGRATION_PROCESS_HARNESS_H_

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "deploy/local/free_ports.h"
#include "deploy/local/task_process.h"
#include "proto/ps.pb.h"

namespace pstrain {
namespace testing {

// The build directory: $PSTRAIN_BIN_DIR (ctest sets it) or the parent of the
// this test binary (build/tests/integration_test).
std::string BuildDir();

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& tag);
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A cluster spec on 127.0.0.1 free ports, written to <dir>/cluster.json;
// the ports stay reserved for the spec's tasks while it lives.
struct LocalSpec {
  cluster::ClusterSpec spec;
  std::string path;
  ReservedPorts ports;
};
LocalSpec MakeLocalSpec(const std::string& dir, int num_ps, int num_workers);

// A running task; its output accumulates in output().
class RunningTask {
 public:
  // env: "KEY=value" entries added to the task's environment.
  RunningTask(const std::string& name, const std::vector<std::string>& argv,
              const std::vector<std::string>& env = {});
  // Waits for exit (collecting output) up to `timeout`; false on timeout.
  bool WaitForExit(std::chrono::seconds timeout);
  bool running();
  const std::string& output() const { return output_; }
  TaskProcess* process() { return process_.get(); }

 private:
  std::unique_ptr<TaskProcess> process_;
  std::string output_;
};

// A cluster whose tasks the test starts, kills and restarts one by one, as
// Kubernetes would: every task is a real process on loopback.
class TestCluster {
 public:
  // Every task gets `flags` (plus --undefok for them); nothing starts yet.
  TestCluster(const std::string& dir, int num_ps, int num_workers, std::vector<std::string> flags);
  ~TestCluster();  // kills whatever still runs

  void StartAll();
  // "ps:1", "worker:0", "chief:0"; extra flags for this start only.
  void Start(const std::string& task, const std::vector<std::string>& extra = {});
  void Kill9(const std::string& task);
  RunningTask* task(const std::string& name) { return tasks_.at(name).get(); }
  const cluster::ClusterSpec& spec() const { return spec_.spec; }
  // Every output line of every incarnation of a task so far.
  std::string Output(const std::string& task);
  // The last `lines` output lines of every task, each block headed by its
  // name: what a failed wait prints.
  std::string Tails(size_t lines = 25);
  // Waits for the task to exit, draining every task's output meanwhile (a
  // task whose pipe fills up would block); false after `timeout`.
  bool WaitForExit(const std::string& task, std::chrono::seconds timeout);
  // Waits up to chief_timeout for the chief to exit, then up to a minute
  // for each other task: "" when every task exited 0, else which did not,
  // how, and its output.
  std::string WaitForJobEnd(std::chrono::seconds chief_timeout);
  // Polls ps:0 until global_step >= step; false after `timeout`.
  bool WaitForStep(int64_t step, std::chrono::seconds timeout);
  // Polls ps:0 until `done` holds for its status; false after `timeout`.
  bool WaitForPs0(const std::function<bool(const proto::StatusResponse&)>& done,
                  std::chrono::seconds timeout);

 private:
  std::vector<std::string> Argv(const std::string& task) const;
  LocalSpec spec_;
  std::vector<std::string> flags_;
  std::map<std::string, std::unique_ptr<RunningTask>> tasks_;
  std::map<std::string, std::string> past_output_;  // of killed incarnations
};

// The threads of a live task now (/proc); -1 when it cannot be read.
int ThreadsOf(RunningTask* task);

// Whether Debian's dataset-fashion-mnist is installed (the tests that train
// on it skip without it).
bool HaveFashionMnist();

// The test accuracy of the chief's "final:" line, or -1 without one.
double FinalAccuracy(const std::string& chief_output);

// Runs a command to completion, collecting its output; returns the exit
// description ("exit code 0") or "timeout". env: as RunningTask's.
std::string RunToCompletion(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                            std::string* output, const std::vector<std::string>& env = {});

}  // namespace testing
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_INTEGRATION_PROCESS_HARNESS_H_
