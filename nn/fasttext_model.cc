#include "nn/fasttext_model.h"

#include <algorithm>
#include <cmath>

namespace pstrain {
namespace nn {

StatusOr<std::unique_ptr<FastTextModel>> FastTextModel::Create(const proto::ModelSpec& spec,
                                                               uint64_t seed) {
  const std::string where = "model " + (spec.name().empty() ? std::string("model") : spec.name());
  const bool shaped = spec.layer_size() == 2 && spec.layer(0).has_embedding_bag() &&
                      (spec.layer(0).embedding_bag().combiner().empty() ||
                       spec.layer(0).embedding_bag().combiner() == "mean") &&
                      spec.layer(1).has_dense() && !spec.layer(1).dense().relu() &&
                      spec.layer(1).dense().units() == spec.num_classes();
  if (!shaped) {
    return InvalidArgument(where +
                           ": loss_reduction EXAMPLE_BY_EXAMPLE trains fastText's network: an "
                           "embedding_bag (combiner mean) then a dense layer without relu to "
                           "num_classes units");
  }
  proto::ModelSpec net = spec;
  net.set_loss_reduction(proto::SUM);  // the network's logits and losses as they are
  PS_ASSIGN_OR_RETURN(std::unique_ptr<GraphModel> graph, GraphModel::Create(net, seed));
  return std::unique_ptr<FastTextModel>(new FastTextModel(std::move(graph)));
}

StatusOr<float> FastTextModel::LossAndGradients(const std::vector<Tensor>& params,
                                                const ModelInput& input,
                                                const std::vector<int32_t>& labels,
                                                std::vector<Tensor>* grads,
                                                std::vector<Tensor>* row_grads, StepHooks* hooks) {
  const std::string& name = net_->name();
  PS_RETURN_IF_ERROR(CheckInputKind(*this, name, input));
  // 0 at the end of a linear decay: the step changes nothing.
  if (!(input.learning_rate >= 0) || !std::isfinite(input.learning_rate)) {
    return InvalidArgument(name + ": example-by-example updates need a learning rate >= 0, got " +
                           std::to_string(input.learning_rate));
  }
  if (params.size() != variables().size()) {
    return InvalidArgument(name + ": " + std::to_string(params.size()) + " params for " +
                           std::to_string(variables().size()) + " variables");
  }
  for (size_t v = 0; v < params.size(); ++v) {
    if (hooks != nullptr) PS_RETURN_IF_ERROR(hooks->ParamReady(v));
    PS_RETURN_IF_ERROR(CheckParam(name, variables()[v], params[v]));
  }
  PS_RETURN_IF_ERROR(net_->CheckIds(input.ids, static_cast<int64_t>(labels.size())));
  const BagIds& bag = input.ids.bags[0];
  const Tensor& rows = *input.ids.rows[0];
  const int64_t dim = rows.dim(1);
  const int classes = num_classes();
  weights_ = params[0];
  rows_.assign(rows.data(), rows.data() + rows.size());
  const float* bias = params[1].data();
  float* w = weights_.data();  // [dim, classes]
  hidden_.assign(dim, 0);
  grad_.assign(dim, 0);
  probs_.assign(classes, 0);
  const float lr = input.learning_rate;
  double loss = 0;
  for (size_t e = 0; e < labels.size(); ++e) {
    const int y = labels[e];
    if (y < 0 || y >= classes) {
      return InvalidArgument(name + ": label " + std::to_string(y) + " outside [0, " +
                             std::to_string(classes) + ")");
    }
    const int64_t begin = bag.ids->row_splits[e], end = bag.ids->row_splits[e + 1];
    if (begin == end) continue;  // fastText skips a line without input
    const float inv_n = 1.0f / static_cast<float>(end - begin);
    std::fill(hidden_.begin(), hidden_.end(), 0.0f);
    for (int64_t i = begin; i < end; ++i) {
      const float* row = rows_.data() + static_cast<int64_t>((*bag.position)[i]) * dim;
      for (int64_t d = 0; d < dim; ++d) hidden_[d] += row[d];
    }
    for (int64_t d = 0; d < dim; ++d) hidden_[d] *= inv_n;
    float top = -INFINITY;
    for (int c = 0; c < classes; ++c) {
      float z = bias[c];
      for (int64_t d = 0; d < dim; ++d) z += hidden_[d] * w[d * classes + c];
      probs_[c] = z;
      top = std::max(top, z);
    }
    double total = 0;
    for (int c = 0; c < classes; ++c) total += (probs_[c] = std::exp(probs_[c] - top));
    for (int c = 0; c < classes; ++c) probs_[c] = static_cast<float>(probs_[c] / total);
    loss -= std::log(std::max(probs_[y], 1e-30f));
    std::fill(grad_.begin(), grad_.end(), 0.0f);
    for (int c = 0; c < classes; ++c) {
      const float a = lr * ((c == y ? 1.0f : 0.0f) - probs_[c]);
      for (int64_t d = 0; d < dim; ++d) {
        grad_[d] += a * w[d * classes + c];
        w[d * classes + c] += a * hidden_[d];
      }
    }
    for (int64_t i = begin; i < end; ++i) {
      float* row = rows_.data() + static_cast<int64_t>((*bag.position)[i]) * dim;
      for (int64_t d = 0; d < dim; ++d) row[d] += grad_[d] * inv_n;
    }
  }
  // What the ps subtracts: before - after.
  grads->resize(2);
  (*grads)[0] = params[0];
  for (int64_t i = 0; i < weights_.size(); ++i) (*grads)[0][i] -= weights_[i];
  (*grads)[1] = Tensor(params[1].shape());
  row_grads->resize(1);
  Tensor& rows_delta = (*row_grads)[0];
  if (rows_delta.shape() != rows.shape() || !rows_delta.owns_data()) {
    rows_delta = Tensor(rows.shape(), Tensor::kUninitialized);
  }
  const float* before = rows.data();
  float* delta = rows_delta.data();
  for (int64_t i = 0; i < rows.size(); ++i) delta[i] = before[i] - rows_[i];
  for (size_t v = 0; hooks != nullptr && v < grads->size(); ++v) {
    PS_RETURN_IF_ERROR(hooks->GradientReady(v));
  }
  return static_cast<float>(loss);
}

}  // namespace nn
}  // namespace pstrain
