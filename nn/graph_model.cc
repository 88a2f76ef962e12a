#include "nn/graph_model.h"

#include <initializer_list>
#include <limits>
#include <map>

#include "nn/cpu/cpu_backend.h"
#include "nn/layers/layers.h"

namespace pstrain {
namespace nn {
namespace {

// The name of the oneof field set in a LayerSpec ("conv2d"), or "?".
std::string KindName(const proto::LayerSpec& spec) {
  const auto* oneof = spec.GetDescriptor()->FindOneofByName("kind");
  const auto* field = spec.GetReflection()->GetOneofFieldDescriptor(spec, oneof);
  return field != nullptr ? field->name() : "?";
}

// a * b * ..., or INT64_MAX where the product does not fit: a spec from
// outside may describe absurd layers, which its checks refuse later.
int64_t SaturatingProduct(std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(p, f, &p)) return std::numeric_limits<int64_t>::max();
  }
  return p;
}

// Multiply-adds of one example through a layer, times 2; element-wise work
// is not counted (as TF-slim's analyzer counts).
int64_t LayerFlops(const proto::LayerSpec& spec, const Shape& in, const Shape& out) {
  if (spec.has_conv2d()) {
    const int64_t k = spec.conv2d().kernel_size();
    return SaturatingProduct({2, NumElements(out), k, k, in.back()});
  }
  if (spec.has_dense()) return SaturatingProduct({2, NumElements(in), spec.dense().units()});
  return 0;
}

}  // namespace

StatusOr<std::unique_ptr<GraphModel>> GraphModel::Create(const proto::ModelSpec& spec,
                                                         uint64_t seed,
                                                         std::unique_ptr<Backend> backend) {
  return Create(spec, seed, std::move(backend), /*chain=*/false);
}

StatusOr<std::unique_ptr<GraphModel>> GraphModel::CreateChain(const proto::ModelSpec& spec,
                                                              uint64_t seed) {
  return Create(spec, seed, nullptr, /*chain=*/true);
}

StatusOr<std::unique_ptr<GraphModel>> GraphModel::Create(const proto::ModelSpec& spec,
                                                         uint64_t seed,
                                                         std::unique_ptr<Backend> backend,
                                                         bool chain) {
  std::unique_ptr<GraphModel> m(new GraphModel());
  m->name_ = spec.name().empty() ? "model" : spec.name();
  const std::string where = "model " + m->name_;
  PS_ASSIGN_OR_RETURN(m->front_, EmbeddingFront::FromSpec(spec));
  m->example_shape_.assign(spec.input_shape().begin(), spec.input_shape().end());
  if (!m->front_.empty()) {
    if (!m->example_shape_.empty()) {
      return InvalidArgument(where + ": a model of ids (embedding layers) has no input_shape");
    }
    m->example_shape_ = {1, 1, m->front_.width()};
  }
  // Checked before anything multiplies the sizes: they come from a file.
  if (m->example_shape_.size() != 3 || !CheckedNumElements(m->example_shape_).ok() ||
      NumElements(m->example_shape_) <= 0) {
    return InvalidArgument(where + ": input_shape must be three positive sizes, HWC, got " +
                           ShapeString(m->example_shape_));
  }
  for (int64_t d : m->example_shape_) {
    if (d <= 0) return InvalidArgument(where + ": input_shape has a size <= 0");
  }
  m->num_classes_ = spec.num_classes();
  m->sum_loss_ = spec.loss_reduction() == proto::SUM;
  // A chain inside another model (CreateChain) may end in one output.
  if (m->num_classes_ < (chain ? 1 : 2)) {
    return InvalidArgument(where + ": num_classes must be at least 2");
  }
  if (spec.layer_size() == static_cast<int>(m->front_.lookups().size())) {
    return InvalidArgument(where + ": no layers" +
                           (m->front_.empty() ? "" : " after the embedding layers"));
  }
  if (backend == nullptr) {
    auto cpu = cpu::CreateCpuBackend();
    if (!cpu.ok()) return cpu.status().Annotate(where);
    backend = std::move(cpu).value();
  }
  m->backend_ = std::move(backend);
  if (m->sum_loss_ && m->backend_->memory() != nullptr) {
    return InvalidArgument(where + ": loss_reduction SUM runs on the CPU only");
  }
  if (!m->front_.empty() && m->backend_->memory() != nullptr) {
    return InvalidArgument(where + ": embedding layers run on the CPU only, not on " +
                           m->backend_->Describe());
  }
  const LayerContext context{m->backend_.get(), seed};
  std::map<std::string, std::string> owner;  // variable name -> layer name
  Shape shape = m->example_shape_;
  for (const EmbeddingLookup& lookup : m->front_.lookups()) {
    m->layer_info_.push_back({lookup.layer, lookup.one_id ? "embedding" : "embedding_bag",
                              Shape{1, 1, lookup.table.dim()}});
  }
  for (int i = static_cast<int>(m->front_.lookups().size()); i < spec.layer_size(); ++i) {
    const proto::LayerSpec& ls = spec.layer(i);
    const std::string kind = KindName(ls);
    const std::string at = where + ": layer " +
                           (ls.name().empty() ? "#" + std::to_string(i + 1) : ls.name()) + " (" +
                           kind + ")";
    if (ls.name().empty()) return InvalidArgument(at + ": no name");
    auto layer = CreateLayer(ls, context);
    if (!layer.ok()) return layer.status().Annotate(at);
    auto out = (*layer)->OutputShape(shape);
    if (!out.ok()) return out.status().Annotate(at);
    if (!CheckedNumElements(*out).ok()) return InvalidArgument(at + ": output too large");
    const int64_t flops = LayerFlops(ls, shape, *out);
    if (__builtin_add_overflow(m->flops_per_example_, flops, &m->flops_per_example_)) {
      m->flops_per_example_ = std::numeric_limits<int64_t>::max();
    }
    std::vector<size_t> owned;
    for (VariableSpec& v : (*layer)->Variables()) {
      if (!CheckedNumElements(v.shape).ok() || NumElements(v.shape) > kMaxVariableElements) {
        return InvalidArgument(at + ": variable " + v.name + " " + ShapeString(v.shape) +
                               " is too large");
      }
      auto [it, fresh] = owner.emplace(v.name, ls.name());
      if (!fresh) {
        return InvalidArgument(at + ": variable " + v.name + " is already defined by layer " +
                               it->second);
      }
      owned.push_back(m->variables_.size());
      m->variables_.push_back(std::move(v));
    }
    m->owned_.push_back(std::move(owned));
    m->layer_info_.push_back({ls.name(), kind, *out});
    m->layers_.push_back(std::move(layer).value());
    shape = *out;
  }
  if (shape != Shape{m->num_classes_}) {
    return InvalidArgument(where + ": the last layer gives " + ShapeString(shape) +
                           ", the logits must be [" + std::to_string(m->num_classes_) + "]");
  }
  m->acts_.resize(m->layers_.size());
  m->dacts_.resize(m->layers_.size());
  if (m->backend_->memory() != nullptr) {
    m->device_params_.resize(m->variables_.size());
    m->device_grads_.resize(m->variables_.size());
  }
  return m;
}

Params GraphModel::LayerParams(size_t layer, const std::vector<Tensor>& params) const {
  const std::vector<Tensor>& placed = device_params_.empty() ? params : device_params_;
  Params p;
  for (size_t v : owned_[layer]) p.push_back(&placed[v]);
  return p;
}

StatusOr<const Tensor*> GraphModel::PlaceImages(const Tensor& images) {
  if (backend_->memory() == nullptr) return &images;
  PS_RETURN_IF_ERROR(backend_->Upload(images, &device_images_).Annotate(name_ + ": images"));
  return &device_images_;
}

Status GraphModel::PlaceParam(size_t v, const std::vector<Tensor>& params) {
  if (backend_->memory() == nullptr) return OkStatus();
  return backend_->Upload(params[v], &device_params_[v])
      .Annotate(name_ + ": " + variables_[v].name);
}

Status GraphModel::Forward(Mode mode, const std::vector<Tensor>& params, const Tensor& images,
                           StepHooks* hooks) {
  if (params.size() != variables_.size()) {
    return InvalidArgument(name_ + ": " + std::to_string(params.size()) + " params, want " +
                           std::to_string(variables_.size()));
  }
  PS_RETURN_IF_ERROR(CheckImages(name_, example_shape_, images));
  PS_ASSIGN_OR_RETURN(const Tensor* placed_images, PlaceImages(images));
  for (size_t i = 0; i < layers_.size(); ++i) {
    for (size_t v : owned_[i]) {
      if (hooks != nullptr) PS_RETURN_IF_ERROR(hooks->ParamReady(v));
      PS_RETURN_IF_ERROR(CheckParam(name_, variables_[v], params[v]));
      PS_RETURN_IF_ERROR(PlaceParam(v, params));
    }
    const Tensor& in = i == 0 ? *placed_images : acts_[i - 1];
    Status s = layers_[i]->Forward(mode, in, LayerParams(i, params), &acts_[i]);
    if (!s.ok()) return s.Annotate(name_ + ": layer " + layers_[i]->name());
  }
  return OkStatus();
}

StatusOr<Tensor> GraphModel::LogitsIn(Mode mode, const std::vector<Tensor>& params,
                                      const Tensor& images) {
  PS_RETURN_IF_ERROR(Forward(mode, params, images, nullptr));
  if (backend_->memory() == nullptr) return acts_.back();
  Tensor logits;
  PS_RETURN_IF_ERROR(backend_->Download(acts_.back(), &logits).Annotate(name_ + ": logits"));
  return logits;
}

const std::vector<std::string>& GraphModel::dense_columns() const {
  static const auto* none = new std::vector<std::string>();
  return *none;
}

StatusOr<const Tensor*> GraphModel::ChainInput(const ModelInput& input) {
  PS_RETURN_IF_ERROR(CheckInputKind(*this, name_, input));
  if (front_.empty()) return input.images;
  PS_RETURN_IF_ERROR(front_.Forward(input.ids, &front_out_).Annotate(name_));
  return &front_out_;
}

StatusOr<Tensor> GraphModel::Logits(const std::vector<Tensor>& params, const ModelInput& input) {
  PS_ASSIGN_OR_RETURN(const Tensor* in, ChainInput(input));
  return LogitsIn(Mode::kInference, params, *in);
}

StatusOr<float> GraphModel::LossAndGradients(const std::vector<Tensor>& params,
                                             const ModelInput& input,
                                             const std::vector<int32_t>& labels,
                                             std::vector<Tensor>* grads,
                                             std::vector<Tensor>* row_grads, StepHooks* hooks) {
  PS_ASSIGN_OR_RETURN(const Tensor* in, ChainInput(input));
  if (front_.empty()) return ChainLossAndGradients(params, *in, labels, grads, hooks, nullptr);
  PS_ASSIGN_OR_RETURN(float loss,
                      ChainLossAndGradients(params, *in, labels, grads, hooks, &dfront_out_));
  PS_RETURN_IF_ERROR(front_.Backward(input.ids, dfront_out_, row_grads).Annotate(name_));
  return loss;
}

StatusOr<float> GraphModel::ChainLossAndGradients(const std::vector<Tensor>& params,
                                                  const Tensor& images,
                                                  const std::vector<int32_t>& labels,
                                                  std::vector<Tensor>* grads, StepHooks* hooks,
                                                  Tensor* dinput) {
  PS_RETURN_IF_ERROR(Forward(Mode::kTraining, params, images, hooks));
  if (static_cast<int64_t>(labels.size()) != images.dim(0)) {
    return InvalidArgument(name_ + ": " + std::to_string(labels.size()) + " labels for " +
                           std::to_string(images.dim(0)) + " images");
  }
  PS_ASSIGN_OR_RETURN(float loss, backend_->SoftmaxCrossEntropy(acts_.back(), labels, &dlogits_));
  if (sum_loss_) {
    // The batch's sum: the mean's loss and gradient, times the batch.
    const float batch = static_cast<float>(labels.size());
    for (int64_t i = 0; i < dlogits_.size(); ++i) dlogits_[i] *= batch;
    loss *= batch;
  }
  PS_ASSIGN_OR_RETURN(double decay_loss, Backward(params, images, dlogits_, grads, hooks, dinput));
  return static_cast<float>(loss + decay_loss);
}

StatusOr<const Tensor*> GraphModel::ChainForward(Mode mode, const std::vector<Tensor>& params,
                                                 const Tensor& input) {
  if (backend_->memory() != nullptr) {
    return InvalidArgument(name_ + ": a chain inside another model runs on the CPU only");
  }
  PS_RETURN_IF_ERROR(Forward(mode, params, input, nullptr));
  return &acts_.back();
}

StatusOr<double> GraphModel::ChainBackward(const std::vector<Tensor>& params, const Tensor& input,
                                           const Tensor& doutputs, std::vector<Tensor>* grads,
                                           Tensor* dinput) {
  if (doutputs.shape() != acts_.back().shape()) {
    return InvalidArgument(name_ + ": the outputs' gradient is " + ShapeString(doutputs.shape()) +
                           ", the outputs " + ShapeString(acts_.back().shape()));
  }
  return Backward(params, input, doutputs, grads, nullptr, dinput);
}

StatusOr<double> GraphModel::Backward(const std::vector<Tensor>& params, const Tensor& images,
                                      const Tensor& dlogits, std::vector<Tensor>* grads,
                                      StepHooks* hooks, Tensor* dinput) {
  std::vector<Tensor>& g = *grads;
  g.resize(variables_.size());
  // Where the layers write the gradients: the caller's, or the device's.
  std::vector<Tensor>& placed_g = device_grads_.empty() ? g : device_grads_;
  const std::vector<Tensor>& placed_params = device_params_.empty() ? params : device_params_;
  const Tensor& placed_images = backend_->memory() == nullptr ? images : device_images_;
  double decay_loss = 0;
  for (size_t i = layers_.size(); i-- > 0;) {
    const Tensor& in = i == 0 ? placed_images : acts_[i - 1];
    const Tensor& dy = i + 1 == layers_.size() ? dlogits : dacts_[i];
    Grads layer_grads;
    for (size_t v : owned_[i]) layer_grads.push_back(&placed_g[v]);
    // The images need no gradient: the first layer skips its input's,
    // unless the embedding front wants it.
    Status s = layers_[i]->Backward(in, acts_[i], LayerParams(i, params), dy,
                                    i == 0 ? dinput : &dacts_[i - 1], layer_grads);
    if (!s.ok()) return s.Annotate(name_ + ": layer " + layers_[i]->name());
    for (size_t v : owned_[i]) {
      // Weight decay: loss += wd * sum(w^2) / 2, so the gradient gains wd * w.
      const float wd = variables_[v].weight_decay;
      if (wd > 0) {
        PS_ASSIGN_OR_RETURN(double term,
                            backend_->AddWeightDecay(placed_params[v], wd, &placed_g[v]));
        decay_loss += term;
      }
      if (&placed_g != &g && !keep_gradients_on_device_) {
        PS_RETURN_IF_ERROR(backend_->Download(placed_g[v], &g[v])
                               .Annotate(name_ + ": gradient of " + variables_[v].name));
      }
      if (hooks != nullptr) PS_RETURN_IF_ERROR(hooks->GradientReady(v));
    }
  }
  return decay_loss;
}

}  // namespace nn
}  // namespace pstrain
