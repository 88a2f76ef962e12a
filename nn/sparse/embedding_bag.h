// EmbeddingBag: the embedding lookups of a batch of id lists, as
// tf.nn.embedding_lookup_sparse computes them. Example b's output is its
// ids' rows, each times its weight (1 without weights), combined:
//   sum    sum_j w_j row(id_j)
//   mean   sum_j w_j row(id_j) / sum_j w_j
//   sqrtn  sum_j w_j row(id_j) / sqrt(sum_j w_j^2)
// and zeros for an example without ids, or whose weights' sum (mean) or
// squares' sum (sqrtn) is zero (TF's div_no_nan).
// An `embedding` layer is a bag of one id per example, combined by sum.
//
// The rows come as a batch's unique ids' rows (what a worker pulls: each
// key once), and the gradient goes out the same way: one row per unique id,
// the contributions of its repeats summed (TF's IndexedSlices after its
// optimizers deduplicate them), never a dense table.
#ifndef PSTRAIN_NN_SPARSE_EMBEDDING_BAG_H_
#define PSTRAIN_NN_SPARSE_EMBEDDING_BAG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/ragged.h"
#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {
namespace nn {

enum class Combiner { kSum, kMean, kSqrtn };
// "sum", "mean" or "sqrtn"; InvalidArgument for another name.
StatusOr<Combiner> CombinerFromName(const std::string& name);

// A batch's ids with, for each, the place of its row among the unique ids'
// rows (ps/embedding/sparse_rows.h's Unique gives both).
struct BagIds {
  const RaggedIds* ids;
  const std::vector<int32_t>* position;  // one per id: its unique id's row
};

// out [batch, dim] from rows [unique ids, dim]. InvalidArgument for ids
// that do not check, or positions outside the rows.
Status EmbeddingBagForward(const BagIds& bag, const Tensor& rows, Combiner combiner, Tensor* out);

// The gradient of the rows, [unique ids, dim], from out's gradient
// [batch, dim].
Status EmbeddingBagBackward(const BagIds& bag, int64_t num_unique, const Tensor& dout,
                            Combiner combiner, Tensor* drows);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_SPARSE_EMBEDDING_BAG_H_
