#include "nn/sparse/embedding_bag.h"

#include <cmath>

namespace pstrain {
namespace nn {
namespace {

// Each example's scale: what its weighted sum is multiplied by.
std::vector<float> Scales(const RaggedIds& ids, Combiner combiner) {
  std::vector<float> scale(ids.batch(), 1.0f);
  if (combiner == Combiner::kSum) return scale;
  for (int64_t b = 0; b < ids.batch(); ++b) {
    double total = 0;
    for (int64_t j = ids.row_splits[b]; j < ids.row_splits[b + 1]; ++j) {
      const double w = ids.weights.empty() ? 1.0 : ids.weights[j];
      total += combiner == Combiner::kMean ? w : w * w;
    }
    // As TF's div_no_nan: weights that sum to zero give zeros.
    if (total == 0) {
      scale[b] = 0;
    } else {
      scale[b] =
          static_cast<float>(combiner == Combiner::kMean ? 1.0 / total : 1.0 / std::sqrt(total));
    }
  }
  return scale;
}

Status CheckBag(const BagIds& bag, int64_t num_unique) {
  PS_RETURN_IF_ERROR(bag.ids->Check("embedding ids"));
  if (bag.position->size() != bag.ids->values.size()) {
    return InvalidArgument("embedding ids: " + std::to_string(bag.position->size()) +
                           " positions for " + std::to_string(bag.ids->values.size()) + " ids");
  }
  for (int32_t p : *bag.position) {
    if (p < 0 || p >= num_unique) {
      return InvalidArgument("embedding ids: a position " + std::to_string(p) + " outside the " +
                             std::to_string(num_unique) + " rows");
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<Combiner> CombinerFromName(const std::string& name) {
  if (name == "sum") return Combiner::kSum;
  if (name == "mean") return Combiner::kMean;
  if (name == "sqrtn") return Combiner::kSqrtn;
  return InvalidArgument("combiner '" + name + "' is not sum, mean or sqrtn");
}

Status EmbeddingBagForward(const BagIds& bag, const Tensor& rows, Combiner combiner, Tensor* out) {
  if (rows.rank() != 2) return InvalidArgument("embedding rows must be [ids, dim]");
  PS_RETURN_IF_ERROR(CheckBag(bag, rows.dim(0)));
  const RaggedIds& ids = *bag.ids;
  const int64_t dim = rows.dim(1);
  const std::vector<float> scale = Scales(ids, combiner);
  *out = Tensor({ids.batch(), dim});
  for (int64_t b = 0; b < ids.batch(); ++b) {
    float* y = out->data() + b * dim;
    for (int64_t j = ids.row_splits[b]; j < ids.row_splits[b + 1]; ++j) {
      const float w = (ids.weights.empty() ? 1.0f : ids.weights[j]) * scale[b];
      const float* row = rows.data() + int64_t{(*bag.position)[j]} * dim;
      for (int64_t d = 0; d < dim; ++d) y[d] += w * row[d];
    }
  }
  return OkStatus();
}

Status EmbeddingBagBackward(const BagIds& bag, int64_t num_unique, const Tensor& dout,
                            Combiner combiner, Tensor* drows) {
  PS_RETURN_IF_ERROR(CheckBag(bag, num_unique));
  const RaggedIds& ids = *bag.ids;
  if (dout.rank() != 2 || dout.dim(0) != ids.batch()) {
    return InvalidArgument("embedding output gradient must be [batch, dim]");
  }
  const int64_t dim = dout.dim(1);
  const std::vector<float> scale = Scales(ids, combiner);
  *drows = Tensor({num_unique, dim});
  for (int64_t b = 0; b < ids.batch(); ++b) {
    const float* dy = dout.data() + b * dim;
    for (int64_t j = ids.row_splits[b]; j < ids.row_splits[b + 1]; ++j) {
      const float w = (ids.weights.empty() ? 1.0f : ids.weights[j]) * scale[b];
      float* g = drows->data() + int64_t{(*bag.position)[j]} * dim;
      for (int64_t d = 0; d < dim; ++d) g[d] += w * dy[d];
    }
  }
  return OkStatus();
}

}  // namespace nn
}  // namespace pstrain
