// Errors of the CUDA runtime as Status values naming the call.
#ifndef PSTRAIN_NN_CUDA_CUDA_STATUS_H_
#define PSTRAIN_NN_CUDA_CUDA_STATUS_H_

#include <cuda_runtime_api.h>

#include <string>

#include "core/status.h"

namespace pstrain {
namespace nn {
namespace cuda {

// OK for cudaSuccess, else Internal("<call>: <CUDA's name>: <its message>").
inline Status CudaStatus(cudaError_t e, const char* call) {
  if (e == cudaSuccess) return OkStatus();
  return Internal(std::string(call) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_CUDA_STATUS_H_
