// TaskProcess: one cluster task run as a child process whose stdout and
// stderr come back through a pipe, a line at a time, for the launcher to
// prefix. The child runs in a process group of its own, so signals sent to
// the launcher's group (a terminal's Ctrl-C) do not reach it; it gets
// SIGTERM if the launcher dies (PR_SET_PDEATHSIG).
//
// Thread-compatible: the launcher's single loop owns every TaskProcess.
#ifndef PSTRAIN_DEPLOY_LOCAL_TASK_PROCESS_H_
#define PSTRAIN_DEPLOY_LOCAL_TASK_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"

namespace pstrain {

class TaskProcess {
 public:
  // Starts argv[0] with argv. `name` is the task ("worker:1"); `env` holds
  // "KEY=value" entries set in the child on top of the launcher's environment.
  static StatusOr<std::unique_ptr<TaskProcess>> Spawn(const std::string& name,
                                                      const std::vector<std::string>& argv,
                                                      const std::vector<std::string>& env = {});
  ~TaskProcess();

  const std::string& name() const { return name_; }
  pid_t pid() const { return pid_; }
  int output_fd() const { return fd_; }
  bool running() const { return running_; }

  // Reads what the pipe holds and appends each complete line, prefixed with
  // "[name] ", to `out`. At end of file, also a final partial line. Returns
  // false at end of file.
  bool DrainOutput(std::string* out);
  // Reaps the child if it exited; true when it has. exit_description() then
  // says how ("exit code 138", "killed by signal 9").
  bool PollExit();
  bool succeeded() const { return !running_ && exited_normally_ && exit_code_ == 0; }
  std::string exit_description() const;
  void Signal(int signo);
  // To its whole process group, as a terminal's Ctrl-C reaches a
  // foreground job (the child leads a group of its own).
  void SignalGroup(int signo);

 private:
  TaskProcess(std::string name, pid_t pid, int fd);
  const std::string name_;
  const pid_t pid_;
  int fd_;
  std::string partial_;
  bool running_ = true;
  bool exited_normally_ = false;
  int exit_code_ = 0;
  int term_signal_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_DEPLOY_LOCAL_TASK_PROCESS_H_
