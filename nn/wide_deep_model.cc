#include "nn/wide_deep_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "data/feature_columns.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {
namespace {

// TF's glorot_normal (the estimators' dense kernels are glorot_uniform, of
// the same variance): a normal truncated at two stddevs, widened so the
// truncated draws keep the variance 2 / (fan_in + fan_out).
float GlorotStddev(int64_t fan_in, int64_t fan_out) {
  return static_cast<float>(std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)) / 0.87962566);
}

void AddDense(proto::ModelSpec* chain, const std::string& name, int64_t fan_in, int64_t units,
              bool relu) {
  proto::LayerSpec* layer = chain->add_layer();
  layer->set_name(name);
  proto::DenseSpec* dense = layer->mutable_dense();
  dense->set_units(units);
  dense->set_relu(relu);
  dense->mutable_weights_initializer()->set_truncated_normal_stddev(GlorotStddev(fan_in, units));
  dense->mutable_biases_initializer()->set_constant(0);
}

}  // namespace

data::FeatureRequest FeatureRequestOf(const Model& model) {
  data::FeatureRequest request;
  for (const EmbeddingLookup& lookup : model.lookups()) {
    if (std::find(request.sparse.begin(), request.sparse.end(), lookup.feature) ==
        request.sparse.end()) {
      request.sparse.push_back(lookup.feature);
    }
  }
  request.dense = model.dense_columns();
  return request;
}

StatusOr<std::unique_ptr<WideDeepModel>> WideDeepModel::Create(const proto::ModelSpec& spec,
                                                               uint64_t seed) {
  std::unique_ptr<WideDeepModel> m(new WideDeepModel());
  m->name_ = spec.name().empty() ? "model" : spec.name();
  const std::string where = "model " + m->name_;
  if (!spec.has_wide_deep()) return InvalidArgument(where + ": no wide_deep");
  const proto::CsvInputSpec& csv = spec.input().csv();
  const proto::ExampleInputSpec& examples = spec.input().examples();
  if (csv.column_size() == 0 && examples.column_size() == 0) {
    return InvalidArgument(where +
                           ": a model of columns reads CSV rows (input { csv { ... } }) or "
                           "the columns of Examples (input { examples { column { ... } } })");
  }
  if (examples.feature_size() > 0) {
    return InvalidArgument(where +
                           ": a model of columns reads its Examples' columns, not features "
                           "(examples { feature { ... } } is for embedding layers)");
  }
  auto columns = data::FeatureColumns::FromSpec(spec);
  if (!columns.ok()) return columns.status().Annotate(where);
  m->num_classes_ = spec.num_classes();
  if (m->num_classes_ < 2) return InvalidArgument(where + ": num_classes must be at least 2");
  if (csv.column_size() > 0 && csv.label_vocabulary_size() != m->num_classes_) {
    return InvalidArgument(where + ": the label vocabulary has " +
                           std::to_string(csv.label_vocabulary_size()) + " values for " +
                           std::to_string(m->num_classes_) + " classes");
  }
  m->units_ = m->num_classes_ == 2 ? 1 : m->num_classes_;
  m->sum_loss_ = SumsLossOverBatch(spec);
  const proto::WideDeepSpec& wd = spec.wide_deep();
  if (wd.dnn_feature_columns().empty()) return InvalidArgument(where + ": no dnn_feature_columns");
  if (!spec.layer().empty() && !wd.dnn_hidden_units().empty()) {
    return InvalidArgument(where + ": the DNN is its layers or dnn_hidden_units, not both");
  }

  // The DNN's columns, in the order of their names.
  std::vector<std::string> dnn_columns(wd.dnn_feature_columns().begin(),
                                       wd.dnn_feature_columns().end());
  std::sort(dnn_columns.begin(), dnn_columns.end());
  std::vector<EmbeddingLookup> dnn_lookups;
  for (const std::string& name : dnn_columns) {
    const proto::FeatureColumn* c = columns->Find(name);
    if (c == nullptr) return InvalidArgument(where + ": no feature column " + name);
    if (c->has_embedding()) {
      const proto::EmbeddingColumn& e = c->embedding();
      EmbeddingLookup lookup;
      lookup.layer = name;
      lookup.feature = e.source();
      auto combiner = CombinerFromName(e.combiner().empty() ? "mean" : e.combiner());
      if (!combiner.ok()) return combiner.status().Annotate(where + ": column " + name);
      lookup.combiner = *combiner;
      lookup.table.set_name("dnn/input_from_feature_columns/input_layer/" + name +
                            "/embedding_weights");
      lookup.table.set_dim(e.dimension());
      lookup.table.set_vocabulary_size(columns->NumBuckets(e.source()));
      if (e.has_initializer_stddev()) lookup.table.set_initializer_stddev(e.initializer_stddev());
      dnn_lookups.push_back(std::move(lookup));
    } else if (columns->DenseWidth(name) > 0) {
      m->dense_columns_.push_back(name);
      m->dense_width_ += columns->DenseWidth(name);
    } else {
      return InvalidArgument(where + ": DNN column " + name +
                             " is not numeric, indicator or embedding");
    }
  }
  m->dnn_front_ = EmbeddingFront::FromLookups(dnn_lookups);
  m->num_dnn_lookups_ = dnn_lookups.size();
  m->lookups_ = std::move(dnn_lookups);

  // The linear model: a table per column, one row of `units` per id.
  proto::OptimizerConfig linear_optimizer = wd.linear_optimizer();
  if (!wd.has_linear_optimizer()) {
    linear_optimizer.set_name("Ftrl");
    linear_optimizer.set_learning_rate(static_cast<float>(
        std::min(0.2, 1.0 / std::sqrt(std::max(1, wd.linear_feature_columns_size())))));
  }
  std::vector<std::string> linear_columns(wd.linear_feature_columns().begin(),
                                          wd.linear_feature_columns().end());
  std::sort(linear_columns.begin(), linear_columns.end());
  const auto linear = [&](const std::string& table, const std::string& feature,
                          int64_t vocabulary) {
    EmbeddingLookup lookup;
    lookup.layer = feature;
    lookup.feature = feature;
    lookup.combiner = Combiner::kSum;
    lookup.table.set_name("linear/linear_model/" + table);
    lookup.table.set_dim(m->units_);
    lookup.table.set_vocabulary_size(vocabulary);
    lookup.table.set_initializer_stddev(0);  // TF's linear weights start at zero
    *lookup.table.mutable_optimizer() = linear_optimizer;
    m->lookups_.push_back(std::move(lookup));
  };
  for (const std::string& name : linear_columns) {
    const proto::FeatureColumn* c = columns->Find(name);
    if (c == nullptr) return InvalidArgument(where + ": no feature column " + name);
    if (columns->IsCategorical(name)) {
      linear(name + "/weights", name, columns->NumBuckets(name));
    } else if (c->has_numeric()) {
      linear(name + "/weights", name, 1);
    } else {
      return InvalidArgument(where + ": linear column " + name + " is not categorical or numeric");
    }
  }
  if (!linear_columns.empty()) linear("bias_weights", data::kLinearBiasFeature, 1);

  // The DNN: the spec's layers, or hidden ReLU layers, then the logits.
  proto::ModelSpec chain;
  chain.set_name(m->name_ + "/dnn");
  int64_t width = m->dnn_front_.width() + m->dense_width_;
  for (int64_t d : {int64_t{1}, int64_t{1}, width}) chain.add_input_shape(d);
  chain.set_num_classes(m->units_);
  for (const proto::LayerSpec& layer : spec.layer()) {
    if (layer.has_embedding() || layer.has_embedding_bag()) {
      return InvalidArgument(where + ": layer " + layer.name() +
                             ": a wide_deep model's embeddings are its embedding columns");
    }
    *chain.add_layer() = layer;
  }
  for (int k = 0; k < wd.dnn_hidden_units_size(); ++k) {
    const int64_t units = wd.dnn_hidden_units(k);
    if (units < 1) return InvalidArgument(where + ": dnn_hidden_units must be >= 1");
    AddDense(&chain, "dnn/hiddenlayer_" + std::to_string(k), width, units, /*relu=*/true);
    width = units;
  }
  if (spec.layer().empty()) AddDense(&chain, "dnn/logits", width, m->units_, /*relu=*/false);
  // Each DNN column's place in the DNN's input, for layers that read it by
  // name: the embeddings, then the dense columns.
  std::vector<GraphModel::InputPart> parts = GraphModel::LookupParts(
      {m->lookups_.begin(),
       m->lookups_.begin() + static_cast<std::ptrdiff_t>(m->num_dnn_lookups_)});
  int64_t offset = parts.empty() ? 0 : parts.back().offset + parts.back().width;
  for (const std::string& name : m->dense_columns_) {
    parts.push_back({name, offset, columns->DenseWidth(name)});
    offset += columns->DenseWidth(name);
  }
  auto dnn = GraphModel::CreateChain(chain, seed, parts);
  if (!dnn.ok()) return dnn.status().Annotate(where);
  m->dnn_ = std::move(dnn).value();
  return m;
}

SparseInput WideDeepModel::DnnPart(const SparseInput& input) const {
  SparseInput dnn;
  dnn.bags.assign(input.bags.begin(), input.bags.begin() + num_dnn_lookups_);
  dnn.rows.assign(input.rows.begin(), input.rows.begin() + num_dnn_lookups_);
  return dnn;
}

Status WideDeepModel::Forward(Mode mode, const std::vector<Tensor>& params,
                              const SparseInput& input) {
  if (input.bags.size() != lookups_.size() || input.rows.size() != lookups_.size() ||
      input.bags.empty()) {
    return InvalidArgument(name_ + ": " + std::to_string(input.bags.size()) + " bags for " +
                           std::to_string(lookups_.size()) + " lookups");
  }
  const int64_t batch = input.bags[0].ids->batch();
  if (dense_width_ > 0 &&
      (input.dense == nullptr || input.dense->shape() != Shape{batch, dense_width_})) {
    return InvalidArgument(name_ + ": the dense columns must come as [" + std::to_string(batch) +
                           ", " + std::to_string(dense_width_) + "]");
  }
  const int64_t embedded = dnn_front_.width();
  if (num_dnn_lookups_ > 0) {
    PS_RETURN_IF_ERROR(dnn_front_.Forward(DnnPart(input), &embedded_).Annotate(name_));
  }
  const int64_t width = embedded + dense_width_;
  dnn_input_ = Tensor({batch, 1, 1, width}, Tensor::kUninitialized);
  for (int64_t b = 0; b < batch; ++b) {
    float* x = dnn_input_.data() + b * width;
    if (embedded > 0) std::memcpy(x, embedded_.data() + b * embedded, embedded * sizeof(float));
    if (dense_width_ > 0) {
      std::memcpy(x + embedded, input.dense->data() + b * dense_width_,
                  dense_width_ * sizeof(float));
    }
  }
  PS_ASSIGN_OR_RETURN(const Tensor* dnn_logits, dnn_->ChainForward(mode, params, dnn_input_));
  logits_ = *dnn_logits;
  for (size_t l = num_dnn_lookups_; l < lookups_.size(); ++l) {
    const Tensor& rows = *input.rows[l];
    if (rows.rank() != 2 || rows.dim(1) != units_ || input.bags[l].ids->batch() != batch) {
      return InvalidArgument(name_ + ": linear column " + lookups_[l].layer + " has rows " +
                             ShapeString(rows.shape()) + " for " +
                             std::to_string(input.bags[l].ids->batch()) + " examples");
    }
    PS_RETURN_IF_ERROR(EmbeddingBagForward(input.bags[l], rows, Combiner::kSum, &linear_)
                           .Annotate(name_ + ": linear column " + lookups_[l].layer));
    for (int64_t i = 0; i < logits_.size(); ++i) logits_[i] += linear_[i];
  }
  return OkStatus();
}

StatusOr<float> WideDeepModel::LossAndGradients(const std::vector<Tensor>& params,
                                                const ModelInput& model_input,
                                                const std::vector<int32_t>& labels,
                                                std::vector<Tensor>* grads,
                                                std::vector<Tensor>* row_grads, StepHooks* hooks) {
  PS_RETURN_IF_ERROR(CheckInputKind(*this, name_, model_input));
  const SparseInput& input = model_input.ids;
  // The variables are the DNN's, all read before the first layer and
  // final after the last (the linear columns are rows).
  for (size_t v = 0; hooks != nullptr && v < params.size(); ++v) {
    PS_RETURN_IF_ERROR(hooks->ParamReady(v));
  }
  PS_RETURN_IF_ERROR(Forward(Mode::kTraining, params, input));
  const int64_t batch = logits_.dim(0);
  if (static_cast<int64_t>(labels.size()) != batch) {
    return InvalidArgument(name_ + ": " + std::to_string(labels.size()) + " labels for " +
                           std::to_string(batch) + " examples");
  }
  double loss = 0;
  if (units_ == 1) {
    // The logistic loss of one logit z: max(z, 0) - z y + log(1 + e^-|z|),
    // its gradient sigmoid(z) - y, averaged over the batch.
    dlogits_ = Tensor({batch, 1}, Tensor::kUninitialized);
    for (int64_t b = 0; b < batch; ++b) {
      if (labels[b] < 0 || labels[b] > 1) {
        return InvalidArgument(name_ + ": label " + std::to_string(labels[b]) + " is not 0 or 1");
      }
      const double z = logits_[b], y = labels[b];
      loss += std::max(z, 0.0) - z * y + std::log1p(std::exp(-std::fabs(z)));
      dlogits_[b] = static_cast<float>((1 / (1 + std::exp(-z)) - y) / batch);
    }
    loss /= static_cast<double>(batch);
  } else {
    PS_ASSIGN_OR_RETURN(float softmax,
                        dnn_->backend_ptr()->SoftmaxCrossEntropy(logits_, labels, &dlogits_));
    loss = softmax;
  }
  if (sum_loss_) {
    // The batch's sum: the mean's loss and gradient, times the batch.
    loss *= static_cast<double>(batch);
    for (int64_t i = 0; i < dlogits_.size(); ++i) dlogits_[i] *= static_cast<float>(batch);
  }
  PS_ASSIGN_OR_RETURN(double decay,
                      dnn_->ChainBackward(params, dnn_input_, dlogits_, grads, &d_dnn_input_));
  row_grads->resize(lookups_.size());
  const int64_t embedded = dnn_front_.width();
  if (num_dnn_lookups_ > 0) {
    d_embedded_ = Tensor({batch, 1, 1, embedded}, Tensor::kUninitialized);
    const int64_t width = embedded + dense_width_;
    for (int64_t b = 0; b < batch; ++b) {
      std::memcpy(d_embedded_.data() + b * embedded, d_dnn_input_.data() + b * width,
                  embedded * sizeof(float));
    }
    std::vector<Tensor> dnn_rows;
    PS_RETURN_IF_ERROR(dnn_front_.Backward(DnnPart(input), d_embedded_, &dnn_rows).Annotate(name_));
    for (size_t l = 0; l < num_dnn_lookups_; ++l) (*row_grads)[l] = std::move(dnn_rows[l]);
  }
  for (size_t l = num_dnn_lookups_; l < lookups_.size(); ++l) {
    PS_RETURN_IF_ERROR(EmbeddingBagBackward(input.bags[l], input.rows[l]->dim(0), dlogits_,
                                            Combiner::kSum, &(*row_grads)[l])
                           .Annotate(name_ + ": linear column " + lookups_[l].layer));
  }
  for (size_t v = 0; hooks != nullptr && v < grads->size(); ++v) {
    PS_RETURN_IF_ERROR(hooks->GradientReady(v));
  }
  return static_cast<float>(loss + decay);
}

StatusOr<Tensor> WideDeepModel::Logits(const std::vector<Tensor>& params, const ModelInput& input) {
  PS_RETURN_IF_ERROR(CheckInputKind(*this, name_, input));
  PS_RETURN_IF_ERROR(Forward(Mode::kInference, params, input.ids));
  if (units_ > 1) return logits_;
  // One logit z: [0, z], whose softmax is [1 - sigmoid(z), sigmoid(z)].
  Tensor two({logits_.dim(0), 2});
  for (int64_t b = 0; b < logits_.dim(0); ++b) two[2 * b + 1] = logits_[b];
  return two;
}

}  // namespace nn
}  // namespace pstrain
