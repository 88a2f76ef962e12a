// SharedArena: the memory where a worker keeps the variables it pulls and
// the gradients it pushes, shared with the ps tasks on its host. The ps
// writes a pull's values straight into the worker's own tensors and reads a
// push's gradients where backward wrote them: on the worker's side nothing
// is copied (through a connection's region, each tensor is copied in on one
// side and out on the other).
//
// Unlike a connection's region, which is handed to the ps once, the
// arena's descriptor is handed over on every connection that shares memory
// (a ps restarted, a second stream); the tensors handed out keep it alive.
// Thread-safe.
#ifndef PSTRAIN_PS_TCP_SHARED_ARENA_H_
#define PSTRAIN_PS_TCP_SHARED_ARENA_H_

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ps/tcp/shared_region.h"

namespace pstrain {
namespace tcp {

class SharedArena : public std::enable_shared_from_this<SharedArena> {
 public:
  // An arena of `bytes` (reserved up front), or why there was no room.
  static StatusOr<std::shared_ptr<SharedArena>> Create(uint64_t bytes);

  // A tensor of `shape` in the arena (64-byte aligned; contents unset), or
  // an ordinary one once the arena is full. Its room is the arena's again
  // once the tensor is gone.
  Tensor Allocate(const Shape& shape);
  // Bytes Allocate takes for a tensor of `shape`.
  static uint64_t BytesFor(const Shape& shape);

  std::shared_ptr<const SharedRegion> region() const { return region_; }

 private:
  explicit SharedArena(std::shared_ptr<SharedRegion> region) : region_(std::move(region)) {}

  // Gives a tensor's room back.
  void Free(uint64_t offset, uint64_t bytes);

  const std::shared_ptr<SharedRegion> region_;
  Mutex mu_;
  uint64_t used_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<uint64_t, std::vector<uint64_t>> free_ ABSL_GUARDED_BY(mu_);  // offsets by size
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_SHARED_ARENA_H_
