// Axis-0 shards of a variable as rows of the whole tensor: what PsFleet cuts
// gradients into on push and stitches variables from on pull.
#ifndef PSTRAIN_PS_SHARD_ROWS_H_
#define PSTRAIN_PS_SHARD_ROWS_H_

#include <cstdint>

#include "cluster/placement.h"
#include "core/tensor.h"

namespace pstrain {

// Elements in one axis-0 row of a tensor of `shape` (1 for rank 0 and 1).
int64_t RowElements(const Shape& shape);

// The shard's rows of a whole variable, as a tensor of the shard's shape.
Tensor SliceRows(const Tensor& whole, const cluster::Shard& shard);

// Copies a shard's values into its rows of the whole variable.
void PlaceRows(const Tensor& shard_values, const cluster::Shard& shard, Tensor* whole);

}  // namespace pstrain

#endif  // PSTRAIN_PS_SHARD_ROWS_H_
