#include "nn/sparse/embedding_front.h"

#include <cstring>
#include <set>

#include "nn/variable_names.h"

namespace pstrain {
namespace nn {
namespace {

bool IsLookup(const proto::LayerSpec& layer) {
  return layer.has_embedding() || layer.has_embedding_bag();
}

// The largest row a table may have (EmbeddingTable's own limit).
constexpr int32_t kMaxDim = 65536;

}  // namespace

StatusOr<EmbeddingFront> EmbeddingFront::FromSpec(const proto::ModelSpec& spec) {
  EmbeddingFront front;
  const std::string where = "model " + (spec.name().empty() ? "model" : spec.name());
  // The sparse features the model's input gives: "pixel_ids"
  // (data/pixel_ids.h), "words" (data/text_dataset.h) or the Examples'
  // (data/example_rows.h).
  std::set<std::string> given;
  if (spec.input().has_text()) given.insert("words");
  if (spec.input().preprocessing() == proto::InputSpec::PIXEL_IDS) given.insert("pixel_ids");
  for (const auto& f : spec.input().examples().feature()) given.insert(f.name());
  bool front_ended = false;
  for (const proto::LayerSpec& layer : spec.layer()) {
    if (!IsLookup(layer)) {
      front_ended = true;
      continue;
    }
    const bool one_id = layer.has_embedding();
    const proto::EmbeddingSpec& e = one_id ? layer.embedding() : layer.embedding_bag();
    const std::string at =
        where + ": layer " + layer.name() + (one_id ? " (embedding)" : " (embedding_bag)");
    if (front_ended) {
      return InvalidArgument(at + ": embedding layers must come before every other layer");
    }
    if (layer.name().empty()) return InvalidArgument(at + ": no name");
    if (e.feature().empty()) return InvalidArgument(at + ": no feature to look up");
    if (given.count(e.feature()) == 0) {
      return InvalidArgument(at + ": the input gives no sparse feature '" + e.feature() +
                             "' (input { preprocessing: PIXEL_IDS } gives 'pixel_ids', input "
                             "{ text { ... } } 'words', input { examples { ... } } its "
                             "features)");
    }
    if (e.dim() < 1 || e.dim() > kMaxDim) {
      return InvalidArgument(at + ": dim must be in [1, " + std::to_string(kMaxDim) + "], got " +
                             std::to_string(e.dim()));
    }
    if (e.vocabulary_size() < 0 || e.min_count() < 0 || e.ttl_steps() < 0) {
      return InvalidArgument(at + ": vocabulary_size, min_count and ttl_steps must be >= 0");
    }
    if (e.has_initializer_stddev() && !(e.initializer_stddev() >= 0)) {
      return InvalidArgument(at + ": initializer_stddev must be >= 0");
    }
    if (e.has_initializer_uniform() && !(e.initializer_uniform() >= 0)) {
      return InvalidArgument(at + ": initializer_uniform must be >= 0");
    }
    if (e.has_initializer_stddev() && e.has_initializer_uniform()) {
      return InvalidArgument(at + ": set initializer_stddev or initializer_uniform, not both");
    }
    EmbeddingLookup lookup;
    lookup.layer = layer.name();
    lookup.feature = e.feature();
    lookup.one_id = one_id;
    if (one_id) {
      if (!e.combiner().empty()) return InvalidArgument(at + ": an embedding has no combiner");
      lookup.combiner = Combiner::kSum;
    } else {
      auto combiner = CombinerFromName(e.combiner().empty() ? "mean" : e.combiner());
      if (!combiner.ok()) return combiner.status().Annotate(at);
      lookup.combiner = *combiner;
    }
    proto::EmbeddingTableConfig& t = lookup.table;
    t.set_name(EmbeddingsName(layer.name(), spec.variable_naming()));
    t.set_dim(e.dim());
    t.set_vocabulary_size(e.vocabulary_size());
    if (e.has_initializer_stddev()) t.set_initializer_stddev(e.initializer_stddev());
    if (e.has_initializer_uniform()) t.set_initializer_uniform(e.initializer_uniform());
    t.set_min_count(e.min_count());
    t.set_ttl_steps(e.ttl_steps());
    if (e.has_optimizer()) *t.mutable_optimizer() = e.optimizer();
    front.width_ += e.dim();
    front.lookups_.push_back(std::move(lookup));
  }
  if (!given.empty() && front.empty()) {
    return InvalidArgument(where + ": its input gives ids ('" + *given.begin() +
                           "'), but no embedding layer looks them up");
  }
  return front;
}

EmbeddingFront EmbeddingFront::FromLookups(std::vector<EmbeddingLookup> lookups) {
  EmbeddingFront front;
  for (const EmbeddingLookup& lookup : lookups) front.width_ += lookup.table.dim();
  front.lookups_ = std::move(lookups);
  return front;
}

Status EmbeddingFront::Check(const SparseInput& in, int64_t batch) const {
  if (in.bags.size() != lookups_.size() || in.rows.size() != lookups_.size()) {
    return InvalidArgument("the embedding front has " + std::to_string(lookups_.size()) +
                           " lookups, given " + std::to_string(in.bags.size()) + " bags and " +
                           std::to_string(in.rows.size()) + " row tensors");
  }
  for (size_t l = 0; l < lookups_.size(); ++l) {
    const EmbeddingLookup& lookup = lookups_[l];
    const std::string at = "layer " + lookup.layer + ", feature " + lookup.feature;
    const RaggedIds& ids = *in.bags[l].ids;
    PS_RETURN_IF_ERROR(ids.Check(at));
    if (ids.batch() != batch) {
      return InvalidArgument(at + ": " + std::to_string(ids.batch()) + " examples, want " +
                             std::to_string(batch));
    }
    const Tensor& rows = *in.rows[l];
    if (rows.rank() != 2 || rows.dim(1) != lookup.table.dim()) {
      return InvalidArgument(at + ": rows " + ShapeString(rows.shape()) + ", want [ids, " +
                             std::to_string(lookup.table.dim()) + "]");
    }
    for (int64_t b = 0; lookup.one_id && b < batch; ++b) {
      const int64_t n = ids.row_splits[b + 1] - ids.row_splits[b];
      if (n != 1) {
        return InvalidArgument(at + ": example " + std::to_string(b) + " has " + std::to_string(n) +
                               " ids; an embedding takes exactly one");
      }
    }
    const int64_t vocabulary = lookup.table.vocabulary_size();
    for (int64_t id : ids.values) {
      if (vocabulary > 0 && (id < 0 || id >= vocabulary)) {
        return InvalidArgument(at + ": id " + std::to_string(id) +
                               " is outside the vocabulary [0, " + std::to_string(vocabulary) +
                               ")");
      }
    }
  }
  return OkStatus();
}

Status EmbeddingFront::Forward(const SparseInput& in, Tensor* out) {
  const int64_t batch = in.bags.empty() ? 0 : in.bags[0].ids->batch();
  PS_RETURN_IF_ERROR(Check(in, batch));
  *out = Tensor({batch, 1, 1, width_}, Tensor::kUninitialized);
  int64_t column = 0;
  for (size_t l = 0; l < lookups_.size(); ++l) {
    const int64_t dim = lookups_[l].table.dim();
    PS_RETURN_IF_ERROR(EmbeddingBagForward(in.bags[l], *in.rows[l], lookups_[l].combiner, &slice_)
                           .Annotate("layer " + lookups_[l].layer));
    for (int64_t b = 0; b < batch; ++b) {
      std::memcpy(out->data() + b * width_ + column, slice_.data() + b * dim,
                  static_cast<size_t>(dim) * sizeof(float));
    }
    column += dim;
  }
  return OkStatus();
}

Status EmbeddingFront::Backward(const SparseInput& in, const Tensor& dout,
                                std::vector<Tensor>* drows) {
  const int64_t batch = in.bags.empty() ? 0 : in.bags[0].ids->batch();
  PS_RETURN_IF_ERROR(Check(in, batch));
  if (dout.shape() != Shape{batch, 1, 1, width_}) {
    return InvalidArgument("the embedding front's output gradient is " + ShapeString(dout.shape()) +
                           ", want " + ShapeString({batch, 1, 1, width_}));
  }
  drows->resize(lookups_.size());
  int64_t column = 0;
  for (size_t l = 0; l < lookups_.size(); ++l) {
    const int64_t dim = lookups_[l].table.dim();
    dslice_ = Tensor({batch, dim}, Tensor::kUninitialized);
    for (int64_t b = 0; b < batch; ++b) {
      std::memcpy(dslice_.data() + b * dim, dout.data() + b * width_ + column,
                  static_cast<size_t>(dim) * sizeof(float));
    }
    PS_RETURN_IF_ERROR(EmbeddingBagBackward(in.bags[l], in.rows[l]->dim(0), dslice_,
                                            lookups_[l].combiner, &(*drows)[l])
                           .Annotate("layer " + lookups_[l].layer));
    column += dim;
  }
  return OkStatus();
}

}  // namespace nn
}  // namespace pstrain
