#include "nn/cpu/operand.h"

namespace pstrain {
namespace nn {
namespace cpu {

Operand::Operand(Direction direction, const dnnl::memory::desc& user,
                 const dnnl::memory::desc& prim, const dnnl::engine& engine)
    : user_(user, engine, DNNL_MEMORY_NONE) {
  if (user == prim) {
    prim_ = user_;
    return;
  }
  prim_ = dnnl::memory(prim, engine);
  if (direction == Direction::kInput) {
    reorder_.emplace(user_, prim_);
  } else {
    reorder_.emplace(prim_, user_);
  }
}

dnnl::memory Operand::In(const float* data, dnnl::stream& stream) {
  // oneDNN takes a non-const handle even for memory it only reads.
  user_.set_data_handle(const_cast<float*>(data));
  if (reorder_) reorder_->execute(stream, user_, prim_);
  return prim_;
}

dnnl::memory Operand::Out(float* data) {
  user_.set_data_handle(data);
  return prim_;
}

void Operand::Finish(dnnl::stream& stream) {
  if (reorder_) reorder_->execute(stream, prim_, user_);
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
