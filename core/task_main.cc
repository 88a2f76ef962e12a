#include "core/task_main.h"

#include <gflags/gflags.h>
#include <glog/logging.h>

namespace pstrain {

void InitTaskMain(const char* usage, int* argc, char*** argv) {
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
}

int ExitWith(const Status& error, int exit_code) {
  LOG(ERROR) << error.ToString();
  return exit_code;
}

}  // namespace pstrain
