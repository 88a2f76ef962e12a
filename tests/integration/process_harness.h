// Test harness for integration tests with real processes on loopback: finds
// the built binaries, picks free ports, writes a cluster spec, runs tasks and
// collects their output.
#ifndef PSTRAIN_TESTS_INTEGRATION_PROCESS_HARNESS_H_
#define PSTRAIN_TESTS_INTEGRATION_PROCESS_HARNESS_H_

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cluster/cluster_spec.h"
#include "deploy/local/task_process.h"

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

// A cluster spec on 127.0.0.1 free ports, written to <dir>/cluster.json.
struct LocalSpec {
  cluster::ClusterSpec spec;
  std::string path;
};
LocalSpec MakeLocalSpec(const std::string& dir, int num_ps, int num_workers);

// A running task; its output accumulates in output().
class RunningTask {
 public:
  RunningTask(const std::string& name, const std::vector<std::string>& argv);
  // Waits for exit (collecting output) up to `timeout`; false on timeout.
  bool WaitForExit(std::chrono::seconds timeout);
  bool running();
  const std::string& output() const { return output_; }
  TaskProcess* process() { return process_.get(); }

 private:
  std::unique_ptr<TaskProcess> process_;
  std::string output_;
};

// Runs a command to completion, collecting its output; returns the exit
// description ("exit code 0") or "timeout".
std::string RunToCompletion(const std::vector<std::string>& argv, std::chrono::seconds timeout,
                            std::string* output);

}  // namespace testing
}  // namespace pstrain

#endif  // PSTRAIN_TESTS_INTEGRATION_PROCESS_HARNESS_H_
