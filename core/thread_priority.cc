#include "core/thread_priority.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace pstrain {
namespace {

pid_t ThisThreadsId() { return static_cast<pid_t>(syscall(SYS_gettid)); }

}  // namespace

Status RunThisThreadAtIdlePriority() {
  const sched_param param{};
  if (sched_setscheduler(ThisThreadsId(), SCHED_IDLE, &param) == 0) return OkStatus();
  const int err = errno;
  const std::string why =
      std::string("cannot run this thread at SCHED_IDLE: ") + std::strerror(err);
  return err == EPERM ? PermissionDenied(why) : InvalidArgument(why);
}

bool ThisThreadRunsAtIdlePriority() { return sched_getscheduler(ThisThreadsId()) == SCHED_IDLE; }

}  // namespace pstrain
