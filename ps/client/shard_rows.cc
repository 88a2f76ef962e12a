#include "ps/client/shard_rows.h"

#include <cstring>
#include <iterator>

namespace pstrain {

int64_t RowElements(const Shape& shape) {
  int64_t n = 1;
  for (size_t i = 1; i < shape.size(); ++i) n *= shape[i];
  return n;
}

Tensor SliceRows(const Tensor& whole, const cluster::Shard& shard) {
  return RowsToFill(const_cast<Tensor*>(&whole), shard);
}

Tensor RowsToFill(Tensor* whole, const cluster::Shard& shard) {
  return Tensor::View(shard.shape, whole->data() + shard.row_begin * RowElements(whole->shape()));
}

void DropViews(std::map<std::string, Tensor>* buffers) {
  for (auto it = buffers->begin(); it != buffers->end();) {
    it = it->second.borrows_data() ? buffers->erase(it) : std::next(it);
  }
}

void PlaceRows(const Tensor& shard_values, const cluster::Shard& shard, Tensor* whole) {
  float* rows = whole->data() + shard.row_begin * RowElements(whole->shape());
  if (rows == shard_values.data() || shard_values.bytes() == 0) return;
  std::memcpy(rows, shard_values.data(), shard_values.bytes());
}

}  // namespace pstrain
