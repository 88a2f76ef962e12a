#include "core/task_main.h"

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <malloc.h>

#include <cstdlib>

#include "core/openmp_spin.h"
#include "core/tls.h"

namespace pstrain {

void InitTaskMain(const char* usage, int* argc, char*** argv) {
  RunWithOpenMpSpinLimit(*argv);
  // Tasks allocate and free multi-megabyte tensors every step. By default
  // glibc maps each one with mmap and unmaps it on free, so every step pays
  // page faults and zeroing again; keep them in the heap instead.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
  const Status tls = InitTaskTlsFromFlags();
  if (!tls.ok()) std::exit(ExitWith(tls, kExitBadInput));
  if (TaskTls() != nullptr) LOG(INFO) << "mutual TLS as " << TaskTls()->subject;
}

int ExitStopped(const StopNotice& stop) {
  const int code = stop.signal() > 0 ? kExitStoppedBySignal + stop.signal() : kExitRetryable;
  LOG(INFO) << "stopped before the job was done (" << stop.reason() << "): exit " << code;
  return code;
}

int ExitWith(const Status& error, int exit_code) {
  LOG(ERROR) << error.ToString();
  return exit_code;
}

}  // namespace pstrain
