// ArenaMemory: a trainer's TensorMemory (ps/client/tensor_memory.h) in a
// SharedArena, for the ps tasks on this host that take tensors through it.
// Sized for a trainer's variables and gradients and the pull buffers its
// variables trade places with; an Allocate past that room gets ordinary
// memory (SharedArena::Allocate).
//
// Thread-safe.
#ifndef PSTRAIN_PS_TCP_ARENA_MEMORY_H_
#define PSTRAIN_PS_TCP_ARENA_MEMORY_H_

#include <memory>
#include <vector>

#include "cluster/placement.h"
#include "core/mutex.h"
#include "core/status.h"
#include "ps/client/tensor_memory.h"
#include "ps/tcp/shared_arena.h"

namespace pstrain {
namespace tcp {

class ArenaMemory : public TensorMemory {
 public:
  // An arena for a trainer of `variables`, serving the ps tasks whose
  // `serves` entry is true; why there is none when it cannot be made.
  static StatusOr<std::unique_ptr<ArenaMemory>> Create(
      const std::vector<cluster::VariableInfo>& variables, std::vector<bool> serves);

  // The region to hand the transport of each served ps.
  std::shared_ptr<const SharedRegion> region() const { return arena_->region(); }

  Tensor Allocate(const Shape& shape) override { return arena_->Allocate(shape); }
  bool Serves(int ps) const override;
  // Keeps the arena's tensors for good; drops ordinary ones.
  void Retire(std::vector<Tensor> tensors) override;

 private:
  ArenaMemory(std::shared_ptr<SharedArena> arena, std::vector<bool> serves)
      : arena_(std::move(arena)), serves_(std::move(serves)) {}

  const std::shared_ptr<SharedArena> arena_;
  const std::vector<bool> serves_;
  Mutex mu_;
  std::vector<Tensor> retired_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_ARENA_MEMORY_H_
