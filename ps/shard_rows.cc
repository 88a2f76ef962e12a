#include "ps/shard_rows.h"

#include <cstring>

namespace pstrain {

int64_t RowElements(const Shape& shape) {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

Tensor SliceRows(const Tensor& whole, const cluster::Shard& shard) {
  if (shard.num_parts == 1) return whole;
  Tensor out(shard.shape, Tensor::kUninitialized);
  const int64_t row = RowElements(whole.shape());
  std::memcpy(out.data(), whole.data() + shard.row_begin * row, out.bytes());
  return out;
}

void PlaceRows(const Tensor& shard_values, const cluster::Shard& shard, Tensor* whole) {
  std::memcpy(whole->data() + shard.row_begin * RowElements(whole->shape()), shard_values.data(),
              shard_values.bytes());
}

}  // namespace pstrain
