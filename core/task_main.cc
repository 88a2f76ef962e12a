#include "core/task_main.h"

#include <absl/synchronization/mutex.h>

#include <gflags/gflags.h>
#include <glog/logging.h>
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/openmp_spin.h"

namespace pstrain {

namespace {

// Where pstrain's sources are: the prefix of this file's name before
// "core/task_main.cc", as the compiler names every source.
std::string SourceRoot() {
  const std::string self = __FILE__;
  return self.substr(0, self.size() - std::strlen("core/task_main.cc"));
}

// --help: the usage and the binary's own flags (those defined in pstrain's
// sources), not glog's and gflags' own, which --helpfull lists too.
void PrintOwnFlags(const char* program, const char* usage) {
  const char* slash = std::strrchr(program, '/');
  std::printf("%s: %s\n", slash != nullptr ? slash + 1 : program, usage);
  std::vector<gflags::CommandLineFlagInfo> flags;
  gflags::GetAllFlags(&flags);
  const std::string root = SourceRoot();
  std::sort(flags.begin(), flags.end(), [](const auto& a, const auto& b) {
    return a.filename != b.filename ? a.filename < b.filename : a.name < b.name;
  });
  std::string file;
  for (const gflags::CommandLineFlagInfo& flag : flags) {
    if (flag.filename.compare(0, root.size(), root) != 0) continue;
    if (flag.filename != file) {
      file = flag.filename;
      std::printf("\n  Flags from %s:\n", file.substr(root.size()).c_str());
    }
    std::printf("%s", gflags::DescribeOneFlag(flag).c_str());
  }
  std::printf("\n  --helpfull lists the logging flags too (glog's: --v, --vmodule, ...).\n");
}

bool AsksForHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-help") == 0) return true;
  }
  return false;
}

}  // namespace

void InitToolMain(const char* usage, int* argc, char*** argv) {
  if (AsksForHelp(*argc, *argv)) {
    PrintOwnFlags((*argv)[0], usage);
    std::exit(0);
  }
  RunWithOpenMpSpinLimit(*argv);
  // Debian's Abseil is built without NDEBUG, so every absl::Mutex gRPC
  // locks also walks a graph of all mutexes looking for a deadlock: with a
  // thousand connections that graph search was the largest cost of a
  // process (scale_bench's workers). Tasks do not pay for it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  // Tasks allocate and free multi-megabyte tensors every step. By default
  // glibc maps each one with mmap and unmaps it on free, so every step pays
  // page faults and zeroing again; keep them in the heap instead.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  gflags::SetUsageMessage(usage);
  gflags::ParseCommandLineFlags(argc, argv, true);
  FLAGS_logtostderr = true;
  google::InitGoogleLogging((*argv)[0]);
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
