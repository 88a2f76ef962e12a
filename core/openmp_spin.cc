#include "core/openmp_spin.h"

#include <unistd.h>

#include <cstdlib>

namespace pstrain {

std::string OpenMpSpinToSet(const char* gomp_spincount, const char* omp_wait_policy) {
  if (gomp_spincount != nullptr || omp_wait_policy != nullptr) return "";
  return kOpenMpSpinCount;
}

void RunWithOpenMpSpinLimit(char** argv) {
  const std::string spin =
      OpenMpSpinToSet(std::getenv("GOMP_SPINCOUNT"), std::getenv("OMP_WAIT_POLICY"));
  if (spin.empty()) return;
  // Set before the exec, so a failed exec cannot loop: the next look finds it.
  setenv("GOMP_SPINCOUNT", spin.c_str(), 0);
  execv("/proc/self/exe", argv);
}

}  // namespace pstrain
