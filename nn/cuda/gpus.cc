#include "nn/gpus.h"

#include <cuda_runtime_api.h>

#include "nn/cuda/cuda_status.h"

namespace pstrain {
namespace nn {

GpuProbe ProbeGpus() {
  GpuProbe probe;
  int count = 0;
  // Without a driver or a device this is an error (cudaErrorInsufficientDriver,
  // 35, or cudaErrorNoDevice), not a count of 0.
  Status s = cuda::CudaStatus(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (!s.ok()) {
    probe.why_none = s.message();
    return probe;
  }
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop;
    s = cuda::CudaStatus(cudaGetDeviceProperties(&prop, d), "cudaGetDeviceProperties");
    if (!s.ok()) {
      probe.devices.clear();
      probe.why_none = s.message();
      return probe;
    }
    probe.devices.push_back(std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
                            std::to_string(prop.minor) + ", " +
                            std::to_string(prop.totalGlobalMem >> 30) + " GiB)");
  }
  if (count == 0) probe.why_none = "cudaGetDeviceCount: no device";
  return probe;
}

}  // namespace nn
}  // namespace pstrain
