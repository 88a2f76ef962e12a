#include "ps/tcp/shared_arena.h"

namespace pstrain {
namespace tcp {

namespace {
constexpr uint64_t kAlign = 64;  // as Tensor's own memory
}  // namespace

StatusOr<std::shared_ptr<SharedArena>> SharedArena::Create(uint64_t bytes) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<SharedRegion> region, SharedRegion::Create(bytes));
  return std::shared_ptr<SharedArena>(new SharedArena(std::move(region)));
}

uint64_t SharedArena::BytesFor(const Shape& shape) {
  const uint64_t bytes = static_cast<uint64_t>(NumElements(shape)) * sizeof(float);
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

Tensor SharedArena::Allocate(const Shape& shape) {
  const uint64_t bytes = BytesFor(shape);
  uint64_t offset = 0;
  {
    MutexLock lock(&mu_);
    auto freed = free_.find(bytes);
    if (freed != free_.end() && !freed->second.empty()) {
      offset = freed->second.back();
      freed->second.pop_back();
    } else if (bytes > 0 && region_->Holds(used_, bytes)) {
      offset = used_;
      used_ += bytes;
    } else {
      return Tensor(shape, Tensor::kUninitialized);
    }
  }
  // The tensor's owner: gives the room back, and keeps the arena (and so
  // its mapping) alive until then.
  float* const data = reinterpret_cast<float*>(region_->data() + offset);
  std::shared_ptr<const void> room(data, [arena = shared_from_this(), offset, bytes](const void*) {
    arena->Free(offset, bytes);
  });
  return Tensor::View(shape, data, std::move(room));
}

void SharedArena::Free(uint64_t offset, uint64_t bytes) {
  MutexLock lock(&mu_);
  free_[bytes].push_back(offset);
}

}  // namespace tcp
}  // namespace pstrain
