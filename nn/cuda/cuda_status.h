// Errors of CUDA, cuDNN, cuBLAS and NCCL as Status values naming the call:
// Internal("cudnnConvolutionForward(...): CUDNN_STATUS_BAD_PARAM: ...").
#ifndef PSTRAIN_NN_CUDA_CUDA_STATUS_H_
#define PSTRAIN_NN_CUDA_CUDA_STATUS_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <string>

#include "core/status.h"
#include "nn/cuda/cublas_library.h"

namespace pstrain {
namespace nn {
namespace cuda {

inline Status CudaStatus(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return OkStatus();
  return Internal(std::string(call) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

inline Status CudnnStatus(cudnnStatus_t e, const char* call) {
  if (e == CUDNN_STATUS_SUCCESS) return OkStatus();
  return Internal(std::string(call) + ": " + cudnnGetErrorString(e));
}

// cuBLAS's calls go through the library it opened (cublas_library.h),
// which names its errors.
inline Status CublasStatus(cublasStatus_t e, const char* call) {
  if (e == CUBLAS_STATUS_SUCCESS) return OkStatus();
  auto blas = Cublas();
  if (!blas.ok()) return Internal(std::string(call) + ": cuBLAS status " + std::to_string(e));
  return Internal(std::string(call) + ": " + (*blas)->GetStatusName(e) + ": " +
                  (*blas)->GetStatusString(e));
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

// Return the failure of a library call, naming it, from a function that
// returns Status or StatusOr.
#define PS_CUDA(call) PS_RETURN_IF_ERROR(::pstrain::nn::cuda::CudaStatus((call), #call))
#define PS_CUDNN(call) PS_RETURN_IF_ERROR(::pstrain::nn::cuda::CudnnStatus((call), #call))
#define PS_CUBLAS(call) PS_RETURN_IF_ERROR(::pstrain::nn::cuda::CublasStatus((call), #call))

#endif  // PSTRAIN_NN_CUDA_CUDA_STATUS_H_
