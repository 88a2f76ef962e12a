#include "nn/fasttext_model.h"

#include <algorithm>
#include <cmath>

#include "core/prefetch.h"

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
  alpha_.assign(classes, 0);
  double loss = 0;
  for (size_t e = 0; e < labels.size(); ++e) {
    const int y = labels[e];
    if (y < 0 || y >= classes) {
      return InvalidArgument(name + ": label " + std::to_string(y) + " outside [0, " +
                             std::to_string(classes) + ")");
    }
    const int64_t begin = bag.ids->row_splits[e], end = bag.ids->row_splits[e + 1];
    if (begin == end) continue;  // fastText skips a line without input
    // The next line's rows, scattered over the batch's, start their way
    // into the cache while this line computes.
    if (e + 1 < labels.size()) {
      for (int64_t i = end; i < bag.ids->row_splits[e + 2]; ++i) {
        Prefetch(rows_.data() + static_cast<int64_t>((*bag.position)[i]) * dim);
      }
    }
    loss +=
        UpdateLine(bag.position->data() + begin, end - begin, y, input.learning_rate, bias, w, dim);
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
  const float* after = rows_.data();
  float* delta = rows_delta.data();
  const int64_t n = rows.size();
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) delta[i] = before[i] - after[i];
  for (size_t v = 0; hooks != nullptr && v < grads->size(); ++v) {
    PS_RETURN_IF_ERROR(hooks->GradientReady(v));
  }
  return static_cast<float>(loss);
}

float FastTextModel::UpdateLine(const int32_t* positions, int64_t n, int y, float lr,
                                const float* bias, float* w, int64_t dim) {
  const int classes = num_classes();
  float* rows = rows_.data();
  float* h = hidden_.data();
  float* g = grad_.data();
  float* p = probs_.data();
  float* a = alpha_.data();
  // The loops below run on vectors (-fopenmp-simd): none of these arrays
  // overlaps another, and no row is two of a line's places.
  const float inv_n = 1.0f / static_cast<float>(n);
  std::fill(h, h + dim, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    const float* row = rows + int64_t{positions[i]} * dim;
#pragma omp simd
    for (int64_t d = 0; d < dim; ++d) h[d] += row[d];
  }
#pragma omp simd
  for (int64_t d = 0; d < dim; ++d) h[d] *= inv_n;
  // W is [dim, classes]: each loop over the classes runs along a row of it.
  std::copy(bias, bias + classes, p);
  for (int64_t d = 0; d < dim; ++d) {
    const float h_d = h[d];
    const float* w_d = w + d * classes;
#pragma omp simd
    for (int c = 0; c < classes; ++c) p[c] += h_d * w_d[c];
  }
  const float top = *std::max_element(p, p + classes);
  double total = 0;
  for (int c = 0; c < classes; ++c) total += (p[c] = std::exp(p[c] - top));
  for (int c = 0; c < classes; ++c) p[c] = static_cast<float>(p[c] / total);
  const float loss = -std::log(std::max(p[y], 1e-30f));
  for (int c = 0; c < classes; ++c) a[c] = lr * ((c == y ? 1.0f : 0.0f) - p[c]);
  // Each W[d, c] is read for the rows' gradient before its own update.
  for (int64_t d = 0; d < dim; ++d) {
    const float h_d = h[d];
    float* w_d = w + d * classes;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int c = 0; c < classes; ++c) {
      sum += a[c] * w_d[c];
      w_d[c] += a[c] * h_d;
    }
    g[d] = sum * inv_n;
  }
  for (int64_t i = 0; i < n; ++i) {
    float* row = rows + int64_t{positions[i]} * dim;
#pragma omp simd
    for (int64_t d = 0; d < dim; ++d) row[d] += g[d];
  }
  return loss;
}

}  // namespace nn
}  // namespace pstrain
