// What every pstrain binary does first, and how it ends on an error.
//
// Exit codes follow Kubeflow's TFJob retry conventions (restartPolicy
// ExitCode): 1-127 are permanent, 128-255 retryable. So 1 (bad flag or
// input) and 2 (malformed cluster spec) are permanent, and 138 (a lost peer,
// an interrupted wait) makes the operator recreate the pod.
#ifndef PSTRAIN_CORE_TASK_MAIN_H_
#define PSTRAIN_CORE_TASK_MAIN_H_

#include "core/status.h"

namespace pstrain {

constexpr int kExitBadInput = 1;
constexpr int kExitBadSpec = 2;
constexpr int kExitRetryable = 138;

// Sets the --help text, parses the flags (removing them from argv), sends
// glog's output to stderr, and keeps large buffers in the heap.
void InitTaskMain(const char* usage, int* argc, char*** argv);

// Logs the error and returns `exit_code`, for `return ExitWith(s, code);`.
int ExitWith(const Status& error, int exit_code);

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TASK_MAIN_H_
