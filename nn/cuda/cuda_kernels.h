// The CUDA backend's kernels (nn/kernels.h), each on one device's stream:
// convolution on cuDNN (nn/cuda/conv2d.cc), dense layers on cuBLAS
// (dense.cc), pooling, LRN and batch norm on cuDNN (pool.cc, lrn.cc,
// batch_norm.cc), dropout on a kernel of its own (dropout.cc). Their
// operands must be in the device's memory (FailedPrecondition naming the
// operation otherwise).
#ifndef PSTRAIN_NN_CUDA_CUDA_KERNELS_H_
#define PSTRAIN_NN_CUDA_CUDA_KERNELS_H_

#include <cstdint>
#include <initializer_list>
#include <memory>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/cuda/cuda_device.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cuda {

std::unique_ptr<AffineKernel> MakeConv2D(CudaDevice* device, const Conv2DConfig& config);
std::unique_ptr<AffineKernel> MakeDense(CudaDevice* device, int64_t in, int64_t out);
std::unique_ptr<PoolKernel> MakePool(CudaDevice* device, const PoolConfig& config, bool max);
// InvalidArgument where cuDNN cannot take the config (a window of more
// than 16 channels, a bias below 1e-5, a beta below 0.01).
StatusOr<std::unique_ptr<LrnKernel>> MakeLrn(CudaDevice* device, const LrnConfig& config);
StatusOr<std::unique_ptr<DropoutKernel>> MakeDropout(CudaDevice* device, float keep_prob,
                                                     uint64_t seed);
std::unique_ptr<BatchNormKernel> MakeBatchNorm(CudaDevice* device, const BatchNormConfig& config);

// OK when every operand is in `device`'s memory (an empty one anywhere).
Status CheckOnDevice(CudaDevice* device, const char* op, std::initializer_list<const Tensor*> ts);

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_CUDA_KERNELS_H_
