#include "nn/graph_model.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <map>

#include "nn/cpu/cpu_backend.h"
#include "nn/cpu/tensor_util.h"
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
int64_t LayerFlops(const proto::LayerSpec& spec, const std::vector<Shape>& in, const Shape& out) {
  if (spec.has_conv2d()) {
    const int64_t k = spec.conv2d().kernel_size();
    return SaturatingProduct({2, NumElements(out), k, k, in[0].back()});
  }
  if (spec.has_dense()) return SaturatingProduct({2, NumElements(in[0]), spec.dense().units()});
  if (spec.has_cross()) return SaturatingProduct({2, NumElements(out), NumElements(out)});
  if (spec.has_dot_interaction()) {
    // A dot product of d values for each pair of inputs.
    const auto f = static_cast<int64_t>(in.size());
    return SaturatingProduct({f * (f - 1), NumElements(in[0])});
  }
  return 0;
}

}  // namespace

StatusOr<std::unique_ptr<GraphModel>> GraphModel::Create(const proto::ModelSpec& spec,
                                                         uint64_t seed,
                                                         std::unique_ptr<Backend> backend) {
  return Create(spec, seed, std::move(backend), /*chain=*/false, {});
}

std::vector<GraphModel::InputPart> GraphModel::LookupParts(
    const std::vector<EmbeddingLookup>& lookups) {
  std::vector<InputPart> parts;
  int64_t offset = 0;
  for (const EmbeddingLookup& lookup : lookups) {
    parts.push_back({lookup.layer, offset, lookup.table.dim()});
    offset += lookup.table.dim();
  }
  return parts;
}

StatusOr<std::unique_ptr<GraphModel>> GraphModel::CreateChain(const proto::ModelSpec& spec,
                                                              uint64_t seed,
                                                              const std::vector<InputPart>& parts) {
  return Create(spec, seed, nullptr, /*chain=*/true, parts);
}

StatusOr<std::unique_ptr<GraphModel>> GraphModel::Create(const proto::ModelSpec& spec,
                                                         uint64_t seed,
                                                         std::unique_ptr<Backend> backend,
                                                         bool chain, std::vector<InputPart> parts) {
  std::unique_ptr<GraphModel> m(new GraphModel());
  m->parts_ = std::move(parts);
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
  for (const EmbeddingLookup& lookup : m->front_.lookups()) {
    m->layer_info_.push_back({lookup.layer,
                              lookup.one_id ? "embedding" : "embedding_bag",
                              Shape{1, 1, lookup.table.dim()},
                              {lookup.feature},
                              0});
  }
  const std::vector<InputPart> embedded = LookupParts(m->front_.lookups());
  m->parts_.insert(m->parts_.end(), embedded.begin(), embedded.end());
  PS_RETURN_IF_ERROR(m->BuildLayers(spec, seed));
  const Shape& shape = m->layer_info_.back().output;
  if (shape != Shape{m->num_classes_}) {
    return InvalidArgument(where + ": the last layer gives " + ShapeString(shape) +
                           ", the logits must be [" + std::to_string(m->num_classes_) + "]");
  }
  m->acts_.resize(m->layers_.size());
  m->dacts_.resize(m->layers_.size());
  m->grads_arrived_.resize(m->layers_.size());
  m->part_acts_.resize(m->parts_.size());
  if (m->backend_->memory() != nullptr) {
    m->device_params_.resize(m->variables_.size());
    m->device_grads_.resize(m->variables_.size());
  }
  return m;
}

Status GraphModel::BuildLayers(const proto::ModelSpec& spec, uint64_t seed) {
  const std::string where = "model " + name_;
  const int first = static_cast<int>(front_.lookups().size());
  std::vector<const proto::LayerSpec*> specs;
  for (int i = first; i < spec.layer_size(); ++i) {
    const proto::LayerSpec& ls = spec.layer(i);
    if (ls.name().empty()) {
      return InvalidArgument(where + ": layer #" + std::to_string(i + 1) + " (" + KindName(ls) +
                             "): no name");
    }
    specs.push_back(&ls);
  }
  std::vector<std::string> part_names;
  for (const InputPart& p : parts_) part_names.push_back(p.name);
  auto topology = WireLayers(specs, part_names);
  if (!topology.ok()) return topology.status().Annotate(where);
  topology_ = std::move(topology).value();
  if (!topology_.chain && backend_->memory() != nullptr) {
    return InvalidArgument(where +
                           ": a network whose layers name their inputs runs on the CPU, "
                           "not on " +
                           backend_->Describe());
  }
  const LayerContext context{backend_.get(), seed, spec.variable_naming()};
  std::map<std::string, std::string> owner;  // variable name -> layer name
  int input_readers = 0;
  part_read_.assign(parts_.size(), false);
  for (size_t p = 0; p < topology_.order.size(); ++p) {
    const proto::LayerSpec& ls = *specs[topology_.order[p]];
    const std::string kind = KindName(ls);
    const std::string at = where + ": layer " + ls.name() + " (" + kind + ")";
    auto layer = CreateLayer(ls, context);
    if (!layer.ok()) return layer.status().Annotate(at);
    std::vector<Shape> in;
    std::vector<std::string> in_names;
    for (const LayerSource& s : topology_.inputs[p]) {
      switch (s.kind) {
        case LayerSource::kInput:
          in.push_back(example_shape_);
          in_names.push_back("input");
          ++input_readers;
          break;
        case LayerSource::kPart:
          in.push_back({1, 1, parts_[s.index].width});
          in_names.push_back(parts_[s.index].name);
          part_read_[s.index] = true;
          break;
        case LayerSource::kLayer:
          in.push_back(layer_info_[first + s.index].output);
          in_names.push_back(layer_info_[first + s.index].name);
          break;
      }
    }
    const int count = static_cast<int>(in.size());
    if (!(*layer)->several_inputs() && count != 1) {
      return InvalidArgument(at + ": takes one input, not " + std::to_string(count));
    }
    if (count < (*layer)->min_inputs()) {
      return InvalidArgument(at + ": takes at least " + std::to_string((*layer)->min_inputs()) +
                             " inputs, not " + std::to_string(count));
    }
    auto out = (*layer)->GraphOutputShape(in);
    if (!out.ok()) return out.status().Annotate(at);
    if (!CheckedNumElements(*out).ok()) return InvalidArgument(at + ": output too large");
    const int64_t flops = LayerFlops(ls, in, *out);
    if (__builtin_add_overflow(flops_per_example_, flops, &flops_per_example_)) {
      flops_per_example_ = std::numeric_limits<int64_t>::max();
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
      owned.push_back(variables_.size());
      variables_.push_back(std::move(v));
    }
    owned_.push_back(std::move(owned));
    layer_info_.push_back({ls.name(), kind, *out, std::move(in_names), flops});
    layers_.push_back(std::move(layer).value());
    edge_grads_.emplace_back(count);
  }
  input_grad_direct_ = input_readers <= 1 &&
                       std::find(part_read_.begin(), part_read_.end(), true) == part_read_.end();
  return OkStatus();
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
  // The columns of the parts layers read (on the CPU: a network that names
  // them is not a chain).
  const int64_t batch = images.dim(0), width = images.shape().back();
  for (size_t p = 0; p < parts_.size(); ++p) {
    if (!part_read_[p]) continue;
    const InputPart& part = parts_[p];
    cpu::EnsureShape(&part_acts_[p], {batch, 1, 1, part.width});
    for (int64_t e = 0; e < batch; ++e) {
      const float* from = images.data() + e * width + part.offset;
      std::copy(from, from + part.width, part_acts_[p].data() + e * part.width);
    }
  }
  for (size_t i = 0; i < layers_.size(); ++i) {
    for (size_t v : owned_[i]) {
      if (hooks != nullptr) PS_RETURN_IF_ERROR(hooks->ParamReady(v));
      PS_RETURN_IF_ERROR(CheckParam(name_, variables_[v], params[v]));
      PS_RETURN_IF_ERROR(PlaceParam(v, params));
    }
    GatherInputs(i, *placed_images);
    Status s = layers_[i]->GraphForward(mode, xs_, LayerParams(i, params), &acts_[i]);
    if (!s.ok()) return s.Annotate(name_ + ": layer " + layers_[i]->name());
  }
  return OkStatus();
}

void GraphModel::GatherInputs(size_t i, const Tensor& input) {
  xs_.clear();
  for (const LayerSource& s : topology_.inputs[i]) {
    switch (s.kind) {
      case LayerSource::kInput:
        xs_.push_back(&input);
        break;
      case LayerSource::kPart:
        xs_.push_back(&part_acts_[s.index]);
        break;
      case LayerSource::kLayer:
        xs_.push_back(&acts_[s.index]);
        break;
    }
  }
}

void GraphModel::PointInputGradients(size_t i, Tensor* dinput) {
  dxs_.clear();
  const std::vector<LayerSource>& inputs = topology_.inputs[i];
  for (size_t k = 0; k < inputs.size(); ++k) {
    const LayerSource& s = inputs[k];
    if (s.kind == LayerSource::kLayer) {
      dxs_.push_back(topology_.readers[s.index] == 1 ? &dacts_[s.index] : &edge_grads_[i][k]);
    } else if (dinput == nullptr) {
      dxs_.push_back(nullptr);  // the images need no gradient
    } else {
      dxs_.push_back(input_grad_direct_ ? dinput : &edge_grads_[i][k]);
    }
  }
}

void GraphModel::SumInputGradients(size_t i, Tensor* dinput) {
  const std::vector<LayerSource>& inputs = topology_.inputs[i];
  for (size_t k = 0; k < inputs.size(); ++k) {
    const LayerSource& s = inputs[k];
    Tensor& g = edge_grads_[i][k];
    if (dxs_[k] != &g) continue;
    if (s.kind == LayerSource::kLayer) {
      // The first reader's gradient becomes the sum; the others add to it.
      Tensor& sum = dacts_[s.index];
      if (grads_arrived_[s.index]++ == 0) {
        std::swap(sum, g);
      } else {
        for (int64_t j = 0; j < sum.size(); ++j) sum[j] += g[j];
      }
    } else if (s.kind == LayerSource::kInput) {
      for (int64_t j = 0; j < dinput->size(); ++j) (*dinput)[j] += g[j];
    } else {
      const InputPart& part = parts_[s.index];
      const int64_t width = dinput->shape().back();
      for (int64_t e = 0; e < dinput->dim(0); ++e) {
        float* into = dinput->data() + e * width + part.offset;
        const float* from = g.data() + e * part.width;
        for (int64_t j = 0; j < part.width; ++j) into[j] += from[j];
      }
    }
  }
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
  std::fill(grads_arrived_.begin(), grads_arrived_.end(), 0);
  if (dinput != nullptr && !input_grad_direct_) {
    cpu::EnsureShape(dinput, images.shape());
    dinput->Fill(0.0f);
  }
  for (size_t i = layers_.size(); i-- > 0;) {
    GatherInputs(i, placed_images);
    const Tensor& dy = i + 1 == layers_.size() ? dlogits : dacts_[i];
    Grads layer_grads;
    for (size_t v : owned_[i]) layer_grads.push_back(&placed_g[v]);
    PointInputGradients(i, dinput);
    Status s =
        layers_[i]->GraphBackward(xs_, acts_[i], LayerParams(i, params), dy, dxs_, layer_grads);
    if (!s.ok()) return s.Annotate(name_ + ": layer " + layers_[i]->name());
    SumInputGradients(i, dinput);
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
