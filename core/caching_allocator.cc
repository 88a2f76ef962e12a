#include "core/caching_allocator.h"

#include <glog/logging.h>

namespace pstrain {

CachingAllocator::CachingAllocator(std::unique_ptr<RawDeviceMemory> raw) : raw_(std::move(raw)) {}

CachingAllocator::~CachingAllocator() {
  std::lock_guard<std::mutex> lock(mu_);
  EmptyCacheLocked();
  LOG_IF(WARNING, !lent_.empty()) << "caching allocator: " << lent_.size()
                                  << " blocks still lent out at its end";
}

size_t CachingAllocator::RoundedSize(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t{1} << 20;
  if (bytes == 0) bytes = 1;
  const size_t unit = bytes > kLarge ? kLarge : kSmall;
  return (bytes + unit - 1) / unit * unit;
}

float* CachingAllocator::Allocate(size_t bytes) {
  const size_t size = RoundedSize(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  void* p = nullptr;
  auto it = cached_.find(size);
  if (it != cached_.end()) {
    p = it->second;
    cached_.erase(it);
    ++stats_.cache_hits;
  } else {
    p = raw_->Malloc(size);
    if (p == nullptr && !cached_.empty()) {
      EmptyCacheLocked();
      p = raw_->Malloc(size);
    }
    if (p == nullptr) return nullptr;
    ++stats_.device_allocations;
    stats_.device_bytes += size;
  }
  lent_.emplace(p, size);
  stats_.lent_bytes += size;
  return static_cast<float*>(p);
}

void CachingAllocator::Release(float* p) {
  if (p == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = lent_.find(p);
  CHECK(it != lent_.end()) << "caching allocator: a block it did not lend was given back";
  stats_.lent_bytes -= it->second;
  cached_.emplace(it->second, p);
  lent_.erase(it);
}

void CachingAllocator::CopyWithin(float* dst, const float* src, size_t bytes) {
  raw_->Copy(dst, src, bytes);
}

CachingAllocator::Stats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void CachingAllocator::EmptyCacheLocked() {
  for (auto& [size, p] : cached_) {
    raw_->Free(p);
    stats_.device_bytes -= size;
  }
  cached_.clear();
}

}  // namespace pstrain
