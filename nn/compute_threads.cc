#include "nn/compute_threads.h"

#include <omp.h>

namespace pstrain {
namespace nn {

void SetComputeThreads(int threads) { omp_set_num_threads(threads < 1 ? 1 : threads); }

}  // namespace nn
}  // namespace pstrain
