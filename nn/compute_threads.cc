#include "nn/compute_threads.h"

#include <omp.h>

#include "core/flush_denormals.h"

namespace pstrain {
namespace nn {

void SetComputeThreads(int threads) {
  omp_set_num_threads(threads < 1 ? 1 : threads);
  // The pool's threads live on: set their float mode once, as TensorFlow's
  // CPU threads run (core/flush_denormals.h).
#pragma omp parallel
  FlushDenormalsInThisThread();
}

}  // namespace nn
}  // namespace pstrain
