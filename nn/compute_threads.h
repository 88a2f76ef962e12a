// The threads of this process's CPU kernels: oneDNN's and the hand-written
// loops' OpenMP pool.
#ifndef PSTRAIN_NN_COMPUTE_THREADS_H_
#define PSTRAIN_NN_COMPUTE_THREADS_H_

namespace pstrain {
namespace nn {

// Call before the first computation (threads >= 1). The calling thread and
// the pool's flush denormals to zero from then on.
void SetComputeThreads(int threads);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_COMPUTE_THREADS_H_
