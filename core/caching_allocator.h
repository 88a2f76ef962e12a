// CachingAllocator: DeviceMemory that keeps the blocks given back to it and
// lends them out again. A training step asks for the same sizes every time,
// so after the first step nothing is allocated from the device (cudaMalloc
// and cudaFree synchronize the whole device; a cache hit is a map lookup).
//
// Sizes are rounded up (to 512 bytes, above 1 MiB to a whole MiB) and a
// block serves a request of exactly its rounded size. When the device has
// no room, every cached block is given back to it and the allocation is
// tried once more. Blocks are reused in the order of one stream: a block
// given back while work queued on it is still to run may be lent to work
// queued after it, which runs after it (the CUDA backend queues all of a
// device's work on one stream).
//
// The device underneath is a RawDeviceMemory, so the policy is tested on
// the host. Thread-safe.
#ifndef PSTRAIN_CORE_CACHING_ALLOCATOR_H_
#define PSTRAIN_CORE_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/device_memory.h"

namespace pstrain {

// The device's own allocation calls (cudaMalloc, cudaFree, a device copy).
class RawDeviceMemory {
 public:
  virtual ~RawDeviceMemory() = default;
  virtual void* Malloc(size_t bytes) = 0;  // nullptr when out of memory
  virtual void Free(void* p) = 0;
  virtual void Copy(void* dst, const void* src, size_t bytes) = 0;
};

class CachingAllocator : public DeviceMemory {
 public:
  explicit CachingAllocator(std::unique_ptr<RawDeviceMemory> raw);
  // Gives every cached block back to the device. Every tensor made from it
  // must be gone by then (a warning counts those that are not).
  ~CachingAllocator() override;

  float* Allocate(size_t bytes) override;
  void Release(float* p) override;
  void CopyWithin(float* dst, const float* src, size_t bytes) override;

  // The size a request of `bytes` is served with.
  static size_t RoundedSize(size_t bytes);

  struct Stats {
    size_t device_bytes = 0;  // held from the device: lent plus cached
    size_t lent_bytes = 0;
    int64_t device_allocations = 0;  // Malloc calls that succeeded
    int64_t cache_hits = 0;
  };
  Stats stats() const;

 private:
  // Frees every cached block; mu_ held.
  void EmptyCacheLocked();

  const std::unique_ptr<RawDeviceMemory> raw_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> cached_;     // rounded size -> free block
  std::unordered_map<void*, size_t> lent_;  // block -> rounded size
  Stats stats_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_CACHING_ALLOCATOR_H_
