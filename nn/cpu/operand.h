// Operand: one tensor argument of a oneDNN primitive, bridging the caller's
// plain layout (NHWC, HWIO, ...) and the layout the primitive chose.
//
// When the two layouts match, the primitive reads or writes the caller's
// buffer directly. Otherwise the Operand owns a scratch buffer in the
// primitive's layout, allocated once, and reorders into it (an input) or out
// of it (an output) on each call. Not thread-safe.
#ifndef PSTRAIN_NN_CPU_OPERAND_H_
#define PSTRAIN_NN_CPU_OPERAND_H_

#include <oneapi/dnnl/dnnl.hpp>
#include <optional>

namespace pstrain {
namespace nn {
namespace cpu {

class Operand {
 public:
  enum class Direction { kInput, kOutput };

  Operand() = default;
  // Throws dnnl::error.
  Operand(Direction direction, const dnnl::memory::desc& user, const dnnl::memory::desc& prim,
          const dnnl::engine& engine);

  // For an input: the primitive's view of data, reordered if needed.
  dnnl::memory In(const float* data, dnnl::stream& stream);
  // For an output: the memory the primitive writes; after executing it,
  // call Finish(stream) to move the result into data.
  dnnl::memory Out(float* data);
  void Finish(dnnl::stream& stream);

 private:
  dnnl::memory user_;
  dnnl::memory prim_;                     // user_ itself when the layouts match
  std::optional<dnnl::reorder> reorder_;  // user_ -> prim_ for an input, back for an output
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_OPERAND_H_
