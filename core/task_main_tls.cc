#include <glog/logging.h>

#include <cstdlib>

#include "core/task_main.h"
#include "core/tls.h"
#include "core/tls_flags.h"

namespace pstrain {

void InitTaskMain(const char* usage, int* argc, char*** argv) {
  InitToolMain(usage, argc, argv);
  const Status tls = InitTaskTlsFromFlags();
  if (!tls.ok()) std::exit(ExitWith(tls, kExitBadInput));
  if (TaskTls() != nullptr) LOG(INFO) << "mutual TLS as " << TaskTls()->subject;
}

}  // namespace pstrain
