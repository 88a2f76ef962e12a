// FakeDeviceBackend: a test double of a device backend. Its "device memory"
// is host memory it hands out and tracks, and its kernels are the CPU
// backend's, run through views of that memory; every operand a kernel gets
// must be in its memory, or the call fails naming the operation. CPU tests
// run a GraphModel on it to show that the model keeps every operand where a
// device backend wants it (uploads the images and variables, downloads the
// gradients and logits) with the CPU's results bit for bit, which a GPU
// backend cannot show on a machine without a GPU.
#ifndef PSTRAIN_NN_FAKE_DEVICE_BACKEND_H_
#define PSTRAIN_NN_FAKE_DEVICE_BACKEND_H_

#include <cstdint>
#include <memory>

#include "nn/backend.h"

namespace pstrain {
namespace nn {

struct FakeDeviceCounters {
  int64_t uploads = 0, downloads = 0;
  int64_t live_blocks = 0;  // allocated and not yet released
};

// `counters`, when set, is updated by the backend and must outlive it.
StatusOr<std::unique_ptr<Backend>> CreateFakeDeviceBackend(FakeDeviceCounters* counters = nullptr);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_FAKE_DEVICE_BACKEND_H_
