#include "nn/cuda/relu_kernels.h"

#include "nn/cuda/cuda_status.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

constexpr int kThreads = 256;

int Blocks(int64_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

__global__ void ReluForwardKernel(const float* x, float* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Relu(x[i]);
}

__global__ void ReluBackwardKernel(const float* y, const float* dy, float* dx, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) dx[i] = ReluGrad(dy[i], y[i]);
}

}  // namespace

Status ReluForward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  ReluForwardKernel<<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return CudaStatus(cudaGetLastError(), "ReluForwardKernel launch");
}

Status ReluBackward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  ReluBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(y, dy, dx, n);
  return CudaStatus(cudaGetLastError(), "ReluBackwardKernel launch");
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
