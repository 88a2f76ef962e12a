#include "nn/cpu/tensor_util.h"

namespace pstrain {
namespace nn {
namespace cpu {

void EnsureShape(Tensor* t, const Shape& shape) {
  if (t->shape() == shape) return;
  if (t->size() == NumElements(shape)) {
    t->Reshape(shape);
  } else {
    *t = Tensor(shape);
  }
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
