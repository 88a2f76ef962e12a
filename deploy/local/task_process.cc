#include "deploy/local/task_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace pstrain {

StatusOr<std::unique_ptr<TaskProcess>> TaskProcess::Spawn(const std::string& name,
                                                          const std::vector<std::string>& argv,
                                                          const std::vector<std::string>& env) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    return Unavailable(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) return Unavailable(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) _exit(127);  // the launcher died before prctl
    // A process group of its own: a terminal's Ctrl-C (SIGINT to the
    // foreground group) reaches the launcher alone, which then stops the
    // tasks in order, the ps tasks last, so the chief can still save.
    ::setpgid(0, 0);
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (const std::string& kv : env) ::putenv(const_cast<char*>(kv.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::string msg = "cannot run " + argv[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  ::close(fds[1]);
  ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return std::unique_ptr<TaskProcess>(new TaskProcess(name, pid, fds[0]));
}

TaskProcess::TaskProcess(std::string name, pid_t pid, int fd)
    : name_(std::move(name)), pid_(pid), fd_(fd) {}

TaskProcess::~TaskProcess() {
  if (running_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (fd_ >= 0) ::close(fd_);
}

bool TaskProcess::DrainOutput(std::string* out) {
  if (fd_ < 0) return false;
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n > 0) {
      partial_.append(buf, static_cast<size_t>(n));
      size_t start = 0, nl;
      while ((nl = partial_.find('\n', start)) != std::string::npos) {
        out->append("[" + name_ + "] ").append(partial_, start, nl - start + 1);
        start = nl + 1;
      }
      partial_.erase(0, start);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    // End of file (or an error reading): flush what is left.
    if (!partial_.empty()) out->append("[" + name_ + "] " + partial_ + "\n");
    partial_.clear();
    ::close(fd_);
    fd_ = -1;
    return false;
  }
}

bool TaskProcess::PollExit() {
  if (!running_) return true;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  running_ = false;
  if (WIFEXITED(status)) {
    exited_normally_ = true;
    exit_code_ = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    term_signal_ = WTERMSIG(status);
  }
  return true;
}

std::string TaskProcess::exit_description() const {
  if (running_) return "running";
  if (exited_normally_) return "exit code " + std::to_string(exit_code_);
  return "killed by signal " + std::to_string(term_signal_) + " (" + strsignal(term_signal_) + ")";
}

void TaskProcess::Signal(int signo) {
  if (running_) ::kill(pid_, signo);
}

void TaskProcess::SignalGroup(int signo) {
  if (running_) ::kill(-pid_, signo);
}

}  // namespace pstrain
