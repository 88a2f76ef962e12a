// ReLU forward and backward on a CUDA device, per element with the same
// functions as the CPU backend (nn/elementwise.h): the first kernels of the
// CUDA backend.
#ifndef PSTRAIN_NN_CUDA_RELU_KERNELS_H_
#define PSTRAIN_NN_CUDA_RELU_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/status.h"

namespace pstrain {
namespace nn {
namespace cuda {

// y = max(x, 0) for n floats in device memory, queued on `stream`; y may be
// x. The launch's error, naming it.
Status ReluForward(const float* x, float* y, int64_t n, cudaStream_t stream);
// dx = dy where y > 0, else 0; dx may be dy.
Status ReluBackward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream);

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_RELU_KERNELS_H_
