// What every pstrain binary does first, and how it ends on an error.
//
// Exit codes follow Kubeflow's TFJob retry conventions (restartPolicy
// ExitCode): 1-127 are permanent, 128-255 retryable. Every task (ps, worker,
// chief, evaluator) keeps one contract:
//   0    done: the job ended (a stop signal after that changes nothing)
//   1    a bad flag or input (permanent)
//   2    a malformed cluster spec (permanent)
//   138  a lost peer or an interrupted wait (retryable)
//   143  stopped by SIGTERM before the job was done (128 + 15, retryable;
//        130 for SIGINT), after a graceful stop: the chief saves first. An
//        evicted pod is recreated, not counted as done.
#ifndef PSTRAIN_CORE_TASK_MAIN_H_
#define PSTRAIN_CORE_TASK_MAIN_H_

#include <string>

#include "core/status.h"
#include "core/stop_signals.h"

namespace pstrain {

constexpr int kExitDone = 0;
constexpr int kExitBadInput = 1;
constexpr int kExitBadSpec = 2;
constexpr int kExitRetryable = 138;
constexpr int kExitStoppedBySignal = 128;  // plus the signal's number: 143 for SIGTERM

// The exit code of a task that a stop signal ended before the job was done:
// kExitStoppedBySignal + the signal, logged with the reason. kExitRetryable
// when the stop came from no signal (it is not a normal end either).
int ExitStopped(const StopNotice& stop);

// What every binary does first: limits OpenMP's spinning
// (core/openmp_spin.h: may run the binary again first), answers --help with
// the usage and the binary's own flags, parses the flags (removing them from
// argv), sends glog's output to stderr, and keeps large buffers in the heap.
void InitToolMain(const char* usage, int* argc, char*** argv);

// A cluster task's start (ps, worker, chief, evaluator): InitToolMain, then
// mutual TLS from --tls_cert, --tls_key and --tls_ca (exit 1 when they are
// bad). In task_main_tls.cc, so that an offline tool, which calls
// InitToolMain alone, neither links nor lists the TLS flags.
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
