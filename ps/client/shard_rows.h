// Axis-0 shards of a variable as rows of the whole tensor: what PsFleet cuts
// gradients into on push and stitches variables from on pull.
#ifndef PSTRAIN_PS_CLIENT_SHARD_ROWS_H_
#define PSTRAIN_PS_CLIENT_SHARD_ROWS_H_

#include <cstdint>
#include <map>
#include <string>

#include "cluster/placement.h"
#include "core/tensor.h"

namespace pstrain {

// Elements in one axis-0 row of a tensor of `shape` (1 for rank 0 and 1).
int64_t RowElements(const Shape& shape);

// The shard's rows of a whole variable as a tensor of the shard's shape
// that views them (Tensor::View: rows of a row-major tensor lie in one
// piece, so nothing is copied). Valid while `whole` lives and keeps its
// memory; to be read only.
Tensor SliceRows(const Tensor& whole, const cluster::Shard& shard);

// The same, for a receiver to fill in place.
Tensor RowsToFill(Tensor* whole, const cluster::Shard& shard);

// Removes the tensors of `buffers` that view another's rows (RowsToFill),
// which must not outlive the pull they were filled by. Tensors that keep
// their memory alive (an arena's) stay.
void DropViews(std::map<std::string, Tensor>* buffers);

// Copies a shard's values into its rows of the whole variable, unless they
// are already there (the shard is a RowsToFill view of them).
void PlaceRows(const Tensor& shard_values, const cluster::Shard& shard, Tensor* whole);

}  // namespace pstrain

#endif  // PSTRAIN_PS_CLIENT_SHARD_ROWS_H_
