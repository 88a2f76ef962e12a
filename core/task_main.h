// What every pstrain binary does first, and how it ends on an error.
//
// Exit codes follow Kubeflow's TFJob retry conventions (restartPolicy
// ExitCode): 1-127 are permanent, 128-255 retryable. So 1 (bad flag or
// input) and 2 (malformed cluster spec) are permanent, and 138 (a lost peer,
// an interrupted wait) makes the operator recreate the pod.
#ifndef PSTRAIN_CORE_TASK_MAIN_H_
#define PSTRAIN_CORE_TASK_MAIN_H_

#include <string>

#include "core/status.h"

namespace pstrain {

constexpr int kExitBadInput = 1;
constexpr int kExitBadSpec = 2;
constexpr int kExitRetryable = 138;

// Limits OpenMP's spinning (core/openmp_spin.h: may run the binary again
// first), sets the --help text, parses the flags (removing them from argv),
// sends glog's output to stderr, and keeps large buffers in the heap.
void InitTaskMain(const char* usage, int* argc, char*** argv);

// Logs the error and returns `exit_code`, for `return ExitWith(s, code);`.
int ExitWith(const Status& error, int exit_code);

// The end of a command-line tool's main, after InitTaskMain: refuses an
// argument left over after the flags, else runs `run`; 0 when it succeeds,
// kExitBadInput (logging the error) when either fails.
template <typename Run>
int RunTool(int argc, char** argv, Run&& run) {
  if (argc > 1) {
    return ExitWith(InvalidArgument(std::string("unexpected argument \"") + argv[1] + "\""),
                    kExitBadInput);
  }
  const Status s = run();
  return s.ok() ? 0 : ExitWith(s, kExitBadInput);
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TASK_MAIN_H_
