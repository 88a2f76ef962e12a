#include "nn/gpus.h"

namespace pstrain {
namespace nn {

GpuProbe ProbeGpus() { return {{}, "this build has no CUDA backend (PSTRAIN_CUDA=OFF)"}; }

StatusOr<std::unique_ptr<Backend>> CreateGpuBackend(int ordinal) {
  return FailedPrecondition("cuda:" + std::to_string(ordinal) +
                            ": this build has no CUDA backend (PSTRAIN_CUDA=OFF)");
}

StatusOr<std::unique_ptr<GpuAllReduce>> CreateGpuAllReduce(int num_devices) {
  return FailedPrecondition("all-reduce over " + std::to_string(num_devices) +
                            " GPUs: this build has no CUDA backend (PSTRAIN_CUDA=OFF)");
}

}  // namespace nn
}  // namespace pstrain
