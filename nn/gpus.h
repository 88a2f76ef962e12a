// The CUDA devices this process can use, or why it has none: what a worker
// logs before it picks its backend; and the backend on one of them. Built from nn/cuda/gpus.cc when CMake's
// PSTRAIN_CUDA is on, else from nn/gpus_none.cc.
#ifndef PSTRAIN_NN_GPUS_H_
#define PSTRAIN_NN_GPUS_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "nn/backend.h"

namespace pstrain {
namespace nn {

struct GpuProbe {
  std::vector<std::string> devices;  // "NVIDIA H100 80GB HBM3 (sm_90, 79 GiB)"
  std::string why_none;              // set when devices is empty
};

GpuProbe ProbeGpus();

// The CUDA backend on device `ordinal` (nn/cuda/cuda_backend.cc): Internal
// naming the CUDA call that failed, FailedPrecondition in a build without
// CUDA.
StatusOr<std::unique_ptr<Backend>> CreateGpuBackend(int ordinal);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_GPUS_H_
