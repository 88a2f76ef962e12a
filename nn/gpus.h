// The CUDA devices this process can use, or why it has none: what a worker
// logs before it picks its backend; and the backend on one of them. Built from nn/cuda/gpus.cc when
// CMake's PSTRAIN_CUDA is on, else from nn/gpus_none.cc.
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

// The mean of each variable's tensors across devices cuda:0 .. cuda:K-1, in
// place on every device: NCCL's all-reduce (nn/cuda/nccl_all_reduce.cc).
class GpuAllReduce {
 public:
  virtual ~GpuAllReduce() = default;
  // per_device[d]: the tensors on cuda:d, the same shapes in the same order
  // on every device; the work that wrote them must be finished. Returns
  // once every mean is in place.
  virtual Status Average(const std::vector<std::vector<Tensor>*>& per_device) = 0;
};
// Internal naming the NCCL call that failed; FailedPrecondition without CUDA.
StatusOr<std::unique_ptr<GpuAllReduce>> CreateGpuAllReduce(int num_devices);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_GPUS_H_
