#include "ps/tcp/arena_memory.h"

namespace pstrain {
namespace tcp {

StatusOr<std::unique_ptr<ArenaMemory>> ArenaMemory::Create(
    const std::vector<cluster::VariableInfo>& variables, std::vector<bool> serves) {
  // A trainer's variables and gradients, and the pull buffers its variables
  // trade places with (PsFleet::PlaceShard).
  constexpr int kSets = 3;
  uint64_t bytes = 0;
  for (const cluster::VariableInfo& v : variables) bytes += kSets * SharedArena::BytesFor(v.shape);
  if (bytes == 0) return InvalidArgument("an arena for no variables");
  PS_ASSIGN_OR_RETURN(std::shared_ptr<SharedArena> arena, SharedArena::Create(bytes));
  return std::unique_ptr<ArenaMemory>(new ArenaMemory(std::move(arena), std::move(serves)));
}

bool ArenaMemory::Serves(int ps) const {
  return ps >= 0 && ps < static_cast<int>(serves_.size()) && serves_[ps];
}

void ArenaMemory::Retire(std::vector<Tensor> tensors) {
  MutexLock lock(&mu_);
  for (Tensor& t : tensors) {
    if (!t.owns_data() && !t.borrows_data()) retired_.push_back(std::move(t));
  }
}

}  // namespace tcp
}  // namespace pstrain
