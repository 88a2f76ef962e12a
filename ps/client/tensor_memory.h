// TensorMemory: where a trainer's variables, gradients and pull buffers
// live, apart from how they are sharded and sent. PsFleet asks it for
// tensors; a transport that can move tensors without a copy from memory of
// its own (the tensor channel's arena, ps/tcp/arena_memory.h) provides one,
// and the fleet never learns which it is. Without one, a fleet uses
// ordinary memory.
//
// Thread-safe.
#ifndef PSTRAIN_PS_CLIENT_TENSOR_MEMORY_H_
#define PSTRAIN_PS_CLIENT_TENSOR_MEMORY_H_

#include <vector>

#include "core/tensor.h"

namespace pstrain {

class TensorMemory {
 public:
  virtual ~TensorMemory() = default;

  // A tensor of `shape`, contents unset.
  virtual Tensor Allocate(const Shape& shape) = 0;
  // Whether transfers with ps `ps` read and write this memory's tensors in
  // place (worth keeping that ps's pull buffers here).
  virtual bool Serves(int ps) const = 0;
  // Takes tensors a failed transfer used, never to hand their room out
  // again: a ps may still be reading or writing them where they lie after
  // the caller gave up on it (a timeout, a cut connection).
  virtual void Retire(std::vector<Tensor> tensors) = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_CLIENT_TENSOR_MEMORY_H_
