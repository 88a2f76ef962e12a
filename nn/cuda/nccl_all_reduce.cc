// GpuAllReduce on NCCL: one communicator per device of this process
// (ncclCommInitAll), each variable averaged with ncclAvg in one group, on a
// stream per device of its own.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <vector>

#include "nn/cuda/cuda_status.h"
#include "nn/gpus.h"

namespace pstrain {
namespace nn {
namespace {

Status NcclStatus(ncclResult_t r, const char* call) {
  if (r == ncclSuccess) return OkStatus();
  return Internal(std::string(call) + ": " + ncclGetErrorString(r));
}
#define PS_NCCL(call) PS_RETURN_IF_ERROR(NcclStatus((call), #call))

class NcclAllReduce : public GpuAllReduce {
 public:
  ~NcclAllReduce() override {
    for (size_t d = 0; d < comms_.size(); ++d) {
      cudaSetDevice(static_cast<int>(d));
      if (streams_[d] != nullptr) cudaStreamDestroy(streams_[d]);
      if (comms_[d] != nullptr) ncclCommDestroy(comms_[d]);
    }
  }

  Status Init(int num_devices) {
    comms_.assign(num_devices, nullptr);
    streams_.assign(num_devices, nullptr);
    std::vector<int> devices;
    for (int d = 0; d < num_devices; ++d) devices.push_back(d);
    PS_NCCL(ncclCommInitAll(comms_.data(), num_devices, devices.data()));
    for (int d = 0; d < num_devices; ++d) {
      PS_CUDA(cudaSetDevice(d));
      PS_CUDA(cudaStreamCreateWithFlags(&streams_[d], cudaStreamNonBlocking));
    }
    return OkStatus();
  }

  Status Average(const std::vector<std::vector<Tensor>*>& per_device) override {
    const size_t k = comms_.size();
    if (per_device.size() != k) {
      return InvalidArgument("all-reduce: tensors of " + std::to_string(per_device.size()) +
                             " devices for " + std::to_string(k));
    }
    const size_t vars = per_device[0]->size();
    for (size_t d = 1; d < k; ++d) {
      if (per_device[d]->size() != vars) return InvalidArgument("all-reduce: unequal variables");
      for (size_t v = 0; v < vars; ++v) {
        if ((*per_device[d])[v].shape() != (*per_device[0])[v].shape()) {
          return InvalidArgument("all-reduce: variable " + std::to_string(v) + " is " +
                                 ShapeString((*per_device[d])[v].shape()) +
                                 " on cuda:" + std::to_string(d) + " but " +
                                 ShapeString((*per_device[0])[v].shape()) + " on cuda:0");
        }
      }
    }
    PS_NCCL(ncclGroupStart());
    for (size_t v = 0; v < vars; ++v) {
      for (size_t d = 0; d < k; ++d) {
        Tensor& t = (*per_device[d])[v];
        if (t.size() == 0) continue;
        ncclResult_t r = ncclAllReduce(t.data(), t.data(), static_cast<size_t>(t.size()), ncclFloat,
                                       ncclAvg, comms_[d], streams_[d]);
        if (r != ncclSuccess) {
          (void)ncclGroupEnd();
          return NcclStatus(r, "ncclAllReduce");
        }
      }
    }
    PS_NCCL(ncclGroupEnd());
    for (size_t d = 0; d < k; ++d) {
      PS_CUDA(cudaSetDevice(static_cast<int>(d)));
      PS_CUDA(cudaStreamSynchronize(streams_[d]));
    }
    return OkStatus();
  }

 private:
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
};

}  // namespace

StatusOr<std::unique_ptr<GpuAllReduce>> CreateGpuAllReduce(int num_devices) {
  if (num_devices < 1) return InvalidArgument("all-reduce over no GPU");
  auto reducer = std::make_unique<NcclAllReduce>();
  PS_RETURN_IF_ERROR(reducer->Init(num_devices));
  return std::unique_ptr<GpuAllReduce>(std::move(reducer));
}

}  // namespace nn
}  // namespace pstrain
