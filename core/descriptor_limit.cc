#include "core/descriptor_limit.h"

#include <sys/resource.h>

namespace pstrain {

uint64_t RaiseDescriptorLimit() {
  struct rlimit files;
  if (getrlimit(RLIMIT_NOFILE, &files) != 0) return 0;
  if (files.rlim_cur < files.rlim_max) {
    const rlim_t before = files.rlim_cur;
    files.rlim_cur = files.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &files) != 0) return before;
  }
  return files.rlim_cur;
}

}  // namespace pstrain
