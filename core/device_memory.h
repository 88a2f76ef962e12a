// DeviceMemory: memory outside the host's address space (a GPU's), lent to
// tensors by a backend (nn/backend.h). A tensor whose device() is set holds a
// device pointer in data(): host code never reads or writes through it, and
// only the backend that made it moves its contents (Backend::Upload and
// Download).
#ifndef PSTRAIN_CORE_DEVICE_MEMORY_H_
#define PSTRAIN_CORE_DEVICE_MEMORY_H_

#include <cstddef>

namespace pstrain {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  // `bytes` of device memory, or nullptr when the device has no more.
  virtual float* Allocate(size_t bytes) = 0;
  // Gives back what Allocate returned; work already queued on it may still
  // run (an implementation keeps the block until that is done).
  virtual void Release(float* p) = 0;
  // dst = src, both on this device; for copying a device tensor.
  virtual void CopyWithin(float* dst, const float* src, size_t bytes) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_DEVICE_MEMORY_H_
