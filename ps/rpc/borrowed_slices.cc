#include "ps/rpc/borrowed_slices.h"

#include <glog/logging.h>

#include <chrono>

namespace pstrain {

BorrowedSlices::~BorrowedSlices() {
  std::unique_lock<std::mutex> lock(mu_);
  while (
      !released_.wait_for(lock, std::chrono::seconds(10), [this] { return outstanding_ == 0; })) {
    // Never expected: gRPC frees a slice once its bytes are written or the
    // call is gone. Freeing the memory under it would be worse than waiting.
    LOG(WARNING) << "still waiting for gRPC to release " << outstanding_ << " tensor slices";
  }
}

grpc::Slice BorrowedSlices::Borrow(const char* data, size_t size) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++outstanding_;
  }
  // gRPC's slice type is not const, but it only reads a slice it sends.
  return grpc::Slice(const_cast<char*>(data), size, &BorrowedSlices::Release, this);
}

void BorrowedSlices::Release(void* self) {
  auto* slices = static_cast<BorrowedSlices*>(self);
  std::lock_guard<std::mutex> lock(slices->mu_);
  if (--slices->outstanding_ == 0) slices->released_.notify_all();
}

}  // namespace pstrain
