// SparseRows: the rows of one embedding table that a step touches, one per
// key (TensorFlow's IndexedSlices with unique indices): a lookup's answer
// and a push's gradient. Nothing sparse is ever turned dense.
#ifndef PSTRAIN_PS_EMBEDDING_SPARSE_ROWS_H_
#define PSTRAIN_PS_EMBEDDING_SPARSE_ROWS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ps/embedding/key_index.h"

namespace pstrain {

struct SparseRows {
  std::vector<int64_t> keys;  // unique
  Tensor rows;                // [keys.size(), dim]
};

// A batch's keys without repeats, in the order first seen, and for each
// position of the batch the place of its key among them: what a worker
// looks up (each row once) and how it spreads the rows back.
struct UniqueKeys {
  std::vector<int64_t> keys;
  std::vector<int32_t> position;  // keys[position[i]] == batch[i]
};
UniqueKeys Unique(const int64_t* keys, int64_t n);
// The same into `out`, reusing its vectors and the index `seen` (Reset
// first; dropped when far larger than n keys need): a caller that does this
// at every step keeps both, so nothing is allocated after the first steps
// and the index, grown to the distinct keys of a step rather than to all
// its keys, stays small enough to be cached.
void Unique(const int64_t* keys, int64_t n, KeyIndex* seen, UniqueKeys* out);

// Sums the rows of repeated keys (n keys, each with `dim` values at rows +
// i * dim) into one row per key, in the order first seen: TF's optimizers
// deduplicate an IndexedSlices gradient this way before a sparse update.
SparseRows SumDuplicates(const int64_t* keys, int64_t n, const float* rows, int64_t dim);
// The same for a caller that has made the keys unique already (`unique`,
// Unique of the n keys).
SparseRows SumDuplicates(UniqueKeys unique, const float* rows, int64_t dim);

// Keys on the wire: little-endian int64s, 8 bytes each (the byte order of
// every host pstrain builds for). InvalidArgument, naming `what`, for a
// length that is not a multiple of 8.
StatusOr<std::vector<int64_t>> DecodeKeys(const std::string& bytes, const std::string& what);
std::string EncodeKeys(const std::vector<int64_t>& keys);

}  // namespace pstrain

#endif  // PSTRAIN_PS_EMBEDDING_SPARSE_ROWS_H_
