// FastTextModel: fastText's supervised classifier trained as fastText
// trains it, example by example (loss_reduction: EXAMPLE_BY_EXAMPLE). The
// network is the spec's: one embedding_bag of mean combiner over the words
// (and word n-grams) of a line, then a dense layer to the classes, softmax.
//
// A training step reads its batch's examples in order, and for each makes
// the update fastText's Model::update makes (softmax loss), with the
// weights as the examples before it left them:
//   h = the mean of the line's rows (each occurrence of an id counts);
//   p = softmax(h W + b), the loss -log p[y];
//   for each class c: a = lr (1[c = y] - p[c]); g += a W[:, c];
//                     W[:, c] += a h;
//   each of the line's n rows += g / n.
// b (fastText has none) stays as it is. lr is the batch's
// (ModelInput::learning_rate). What the step gives as "gradients" are the
// step's updates negated, before - after, for the ps to apply with
// GradientDescent at rate 1 (var -= delta): the ps adds each worker's
// batch of updates, as fastText's threads add theirs to shared memory
// (Hogwild), each worker's a batch behind the others' at most. See
// docs/MODELS.md for why this reaches fastText's accuracy at its learning
// rates, where one gradient step of the batch's summed loss diverges.
//
// Logits are the network's, in inference, as GraphModel computes them.
//
// Thread-compatible: one thread at a time (scratch buffers).
#ifndef PSTRAIN_NN_FASTTEXT_MODEL_H_
#define PSTRAIN_NN_FASTTEXT_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "nn/graph_model.h"
#include "nn/model.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

class FastTextModel : public Model {
 public:
  // InvalidArgument, naming the model, unless the spec is an embedding_bag
  // with the mean combiner then a dense layer without relu to num_classes
  // units; GraphModel's errors.
  static StatusOr<std::unique_ptr<FastTextModel>> Create(const proto::ModelSpec& spec,
                                                         uint64_t seed = 0);

  const std::vector<VariableSpec>& variables() const override { return net_->variables(); }
  Shape example_shape() const override { return net_->example_shape(); }
  int num_classes() const override { return net_->num_classes(); }
  std::string backend() const override { return "cpu (fastText's updates, 1 thread)"; }
  const std::vector<EmbeddingLookup>& lookups() const override { return net_->lookups(); }
  const std::vector<std::string>& dense_columns() const override { return net_->dense_columns(); }
  using Model::Logits;
  using Model::LossAndGradients;
  // The batch's summed loss, each example's taken before its update.
  // InvalidArgument for an input of images, a negative or non-finite
  // learning rate, or a label outside [0, num_classes()).
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const ModelInput& input,
                                   const std::vector<int32_t>& labels, std::vector<Tensor>* grads,
                                   std::vector<Tensor>* row_grads, StepHooks* hooks) override;
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const ModelInput& input) override {
    return net_->Logits(params, input);
  }

 private:
  explicit FastTextModel(std::unique_ptr<GraphModel> net) : net_(std::move(net)) {}

  // One line's update, fastText's Model::update with its softmax loss: to
  // W ([dim, classes]) and to the rows of the line's n places among
  // rows_. Returns the line's loss.
  float UpdateLine(const int32_t* positions, int64_t n, int y, float lr, const float* bias,
                   float* w, int64_t dim);

  std::unique_ptr<GraphModel> net_;
  // Scratch of a step: the weights and rows as the examples leave them,
  // one example's hidden vector, its rows' gradient, its probabilities
  // and each class's share of its update.
  Tensor weights_;
  // The rows as the batch's examples update them; a vector, so that its
  // memory stays from one batch to the next as the batch's rows vary.
  std::vector<float> rows_;
  std::vector<float> hidden_, grad_, probs_, alpha_;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_FASTTEXT_MODEL_H_
