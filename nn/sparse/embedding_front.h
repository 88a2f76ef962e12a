// EmbeddingFront: the embedding and embedding_bag layers that start a model
// of ids (proto/model.proto). Each lookup reads one sparse feature of the
// batch, looks its ids up in a table of its own on the ps tasks, and
// combines them (nn/sparse/embedding_bag.h); the front's output is the
// lookups' outputs side by side, [batch, 1, 1, width], which the rest of the
// model reads as its input.
//
// The rows come in and their gradients go out per unique id (what a worker
// pulls and pushes), never as dense tables.
//
// Thread safety: const methods from any thread; Forward and Backward keep
// scratch buffers, one thread at a time.
#ifndef PSTRAIN_NN_SPARSE_EMBEDDING_FRONT_H_
#define PSTRAIN_NN_SPARSE_EMBEDDING_FRONT_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ragged.h"
#include "core/status.h"
#include "core/tensor.h"
#include "nn/sparse/embedding_bag.h"
#include "proto/model.pb.h"
#include "proto/ps.pb.h"

namespace pstrain {
namespace nn {

// One embedding or embedding_bag layer.
struct EmbeddingLookup {
  std::string layer;
  std::string feature;
  bool one_id = false;  // embedding: exactly one id per example
  Combiner combiner = Combiner::kMean;
  // The table on the ps: "<layer>/embedding_weights", dim, vocabulary,
  // initializer, admission, expiry, optimizer.
  proto::EmbeddingTableConfig table;
};

// A batch as the front reads it, per lookup (in lookups() order): the
// feature's ids, each id's place among the unique ids, and the rows pulled
// for the unique ids, [unique ids, dim].
struct SparseInput {
  std::vector<BagIds> bags;
  std::vector<const Tensor*> rows;
  // A model of columns (nn/wide_deep_model.h): its dense columns' values,
  // [batch, width]; null otherwise.
  const Tensor* dense = nullptr;
};

class EmbeddingFront {
 public:
  // The front of `spec`: its leading embedding and embedding_bag layers
  // (none: an empty front). InvalidArgument, as "model NAME: layer LAYER
  // (KIND): problem", for a lookup without a feature or of a feature the
  // spec's input does not give (PIXEL_IDS gives "pixel_ids"), a dim
  // outside [1, 65536], a negative vocabulary size, min_count or ttl_steps,
  // an unknown combiner, an embedding layer after another kind of layer,
  // and an input of ids that no lookup reads.
  static StatusOr<EmbeddingFront> FromSpec(const proto::ModelSpec& spec);
  // A front of lookups made elsewhere (nn/wide_deep_model.h), checked there.
  static EmbeddingFront FromLookups(std::vector<EmbeddingLookup> lookups);

  const std::vector<EmbeddingLookup>& lookups() const { return lookups_; }
  bool empty() const { return lookups_.empty(); }
  int64_t width() const { return width_; }  // the sum of the lookups' dims

  // InvalidArgument, naming the layer, unless every lookup's ids check
  // (one per example for `embedding`, within the vocabulary) and `in`
  // holds one bag and one rows tensor [unique ids, dim] per lookup, each
  // bag of `batch` examples.
  Status Check(const SparseInput& in, int64_t batch) const;
  // out: [batch, 1, 1, width()].
  Status Forward(const SparseInput& in, Tensor* out);
  // drows[l]: the gradient of lookup l's rows, [unique ids, dim], from the
  // output's gradient dout [batch, 1, 1, width()].
  Status Backward(const SparseInput& in, const Tensor& dout, std::vector<Tensor>* drows);

 private:
  std::vector<EmbeddingLookup> lookups_;
  int64_t width_ = 0;
  Tensor slice_, dslice_;  // one lookup's [batch, dim] output and its gradient
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_SPARSE_EMBEDDING_FRONT_H_
