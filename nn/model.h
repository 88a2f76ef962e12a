// Model: a network's variables and its loss, gradients and logits.
//
// Parameters live outside the model (on parameter servers); each call takes
// them as tensors in variables() order, in TensorFlow layouts: conv weights
// HWIO, dense weights [in,out], inputs NHWC.
//
// Thread safety: a Model caches compute primitives and scratch buffers, so one
// Model must be used by one thread at a time. Create one per worker thread.
#ifndef PSTRAIN_NN_MODEL_H_
#define PSTRAIN_NN_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/sparse/embedding_front.h"
#include "nn/step_hooks.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

enum class InitKind { kTruncatedNormal, kConstant, kVarianceScaling };
// value: the stddev for kTruncatedNormal (truncated at 2 stddev), the value
// for kConstant, the scale for kVarianceScaling (proto::VarianceScalingSpec,
// whose mode and distribution it then takes).
struct Initializer {
  InitKind kind;
  float value;
  proto::VarianceScalingSpec::Mode fan_mode = proto::VarianceScalingSpec::FAN_IN;
  proto::VarianceScalingSpec::Distribution distribution =
      proto::VarianceScalingSpec::TRUNCATED_NORMAL;
};
struct VariableSpec {
  std::string name;
  Shape shape;
  Initializer init;
  // false: not trained by the optimizer (a batch norm's moving statistics);
  // LossAndGradients gives its assign_sub delta instead of a gradient.
  bool trainable = true;
  // > 0: the loss adds weight_decay * l2_loss(w) = weight_decay * sum(w^2) / 2.
  float weight_decay = 0;
};

// The initial value of a variable. Deterministic: the same (spec.name, seed)
// gives the same bits on every machine.
Tensor InitialValue(const VariableSpec& spec, uint64_t seed);

// What a model reads of one batch. A model of images reads `images`,
// [N, example_shape()...], already normalized; a model of ids (one whose
// lookups() are not empty) reads, per lookup, the batch's ids and the rows
// pulled for them, and a model of columns its dense values too
// (nn/sparse/embedding_front.h). A model refuses, with InvalidArgument, the
// input of the other kind.
struct ModelInput {
  const Tensor* images = nullptr;  // a model of images
  SparseInput ids;                 // a model of ids
  // A model that updates example by example (nn/fasttext_model.h): the
  // rate of this batch's updates. Others ignore it.
  float learning_rate = 0;
  static ModelInput Images(const Tensor& images) {
    ModelInput input;
    input.images = &images;
    return input;
  }
  static ModelInput Ids(SparseInput ids) {
    ModelInput input;
    input.ids = std::move(ids);
    return input;
  }
};

class Model {
 public:
  virtual ~Model() = default;
  // TF names in TF order: conv1/weights, conv1/biases, ... softmax_linear/biases.
  virtual const std::vector<VariableSpec>& variables() const = 0;
  // The shape of one example, NHWC without N: {28,28,1} for mnist.
  virtual Shape example_shape() const = 0;
  virtual int num_classes() const = 0;
  // What its arithmetic runs on, for logs: "cpu (oneDNN 2.6.3, 2 threads)".
  virtual std::string backend() const = 0;
  // The tables a model of ids looks up on the ps tasks, one per lookup;
  // none for a model of images.
  virtual const std::vector<EmbeddingLookup>& lookups() const = 0;
  // The dense columns a model of columns reads beside its ids, in the
  // order its input gives them; none for another model.
  virtual const std::vector<std::string>& dense_columns() const = 0;

  // The batch's loss (training mode: the mean softmax cross-entropy, or
  // the sum where the spec says so), and one tensor per param in
  // variables() order: d(loss)/d(param) for a trainable variable; for a
  // non-trainable one the delta its owner subtracts from it (var -= delta,
  // TF's assign_sub), pushed beside the gradients — for a moving statistic
  // delta = (1 - decay) * (moving - batch statistic). A model of ids also
  // gives (*row_grads)[l], lookup l's rows' gradient [its unique ids, dim]
  // (row_grads may be null for a model of images). Labels in
  // [0, num_classes()). grads is resized and overwritten (buffers of the
  // right shape are reused). InvalidArgument for bad shapes, ids or labels.
  //
  // `hooks` (nn/step_hooks.h; none when null): params[v] is read only after
  // hooks->ParamReady(v), and each gradient is handed on as soon as it is
  // final. `params` must already have its size; a variable's tensor may
  // still be filled by another thread until its ParamReady returns.
  virtual StatusOr<float> LossAndGradients(const std::vector<Tensor>& params,
                                           const ModelInput& input,
                                           const std::vector<int32_t>& labels,
                                           std::vector<Tensor>* grads,
                                           std::vector<Tensor>* row_grads, StepHooks* hooks) = 0;
  // [N, num_classes()], in inference mode (batch norm uses its moving
  // statistics).
  virtual StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const ModelInput& input) = 0;

  // The same for a model of images.
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const Tensor& images,
                                   const std::vector<int32_t>& labels, std::vector<Tensor>* grads,
                                   StepHooks* hooks = nullptr) {
    return LossAndGradients(params, ModelInput::Images(images), labels, grads, nullptr, hooks);
  }
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const Tensor& images) {
    return Logits(params, ModelInput::Images(images));
  }
};

// A built-in network ("mnist", "mnist_bn", "cifar10", "mnist_ids") or a ModelSpec text
// file (nn/model_spec.h, nn/graph_model.h). NotFound for a name that is
// neither; InvalidArgument naming the file, layer and problem for a spec
// that does not parse or hold together.
StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& name_or_path);
// The network a spec describes (nn/graph_model.h's errors).
StatusOr<std::unique_ptr<Model>> CreateModel(const proto::ModelSpec& spec);

// InvalidArgument, naming the model and variable, unless param has the
// variable's shape.
Status CheckParam(const std::string& model, const VariableSpec& variable, const Tensor& param);
// InvalidArgument, naming the model, unless `images` is a non-empty batch
// [N, example_shape...].
Status CheckImages(const std::string& model, const Shape& example_shape, const Tensor& images);
// InvalidArgument, naming the model, unless `input` is of the kind it
// reads: ids when it has lookups, else images.
Status CheckInputKind(const Model& model, const std::string& name, const ModelInput& input);
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_MODEL_H_
