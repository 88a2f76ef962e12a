// cuBLAS, opened (dlopen) when the first GPU device is, not when the
// process starts: loading libcublas, with the libcublasLt it needs, makes
// a process about 210 MB larger at once (their static data), which a
// worker computing on the CPU would carry for nothing.
#ifndef PSTRAIN_NN_CUDA_CUBLAS_LIBRARY_H_
#define PSTRAIN_NN_CUDA_CUBLAS_LIBRARY_H_

#include <cublas_v2.h>

#include "core/status.h"

namespace pstrain {
namespace nn {
namespace cuda {

// The cuBLAS calls the backend makes (cublas_v2.h's, by their _v2 names).
struct CublasLibrary {
  decltype(&cublasCreate_v2) Create;
  decltype(&cublasDestroy_v2) Destroy;
  decltype(&cublasSetStream_v2) SetStream;
  decltype(&cublasSgemm_v2) Sgemm;
  decltype(&cublasSgemv_v2) Sgemv;
  decltype(&cublasGetStatusName) GetStatusName;
  decltype(&cublasGetStatusString) GetStatusString;
};

// The library, opened by the first call (thread-safe) and kept open;
// FailedPrecondition naming it and why when it cannot be.
StatusOr<const CublasLibrary*> Cublas();

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_CUBLAS_LIBRARY_H_
