// MnistModel: the TensorFlow multi-GPU MNIST example network (MODELS.md,
// "mnist"): conv1 5x5x32 SAME + ReLU, max pool 2x2/2 SAME, conv2 5x5x64 SAME
// + ReLU, max pool 2x2/2 SAME, local3 3136->1024 + ReLU, local4 1024->10 +
// ReLU, softmax_linear 10->10, mean sparse softmax cross-entropy.
//
// Thread safety: as Model; activations and primitives are cached between
// calls, so one thread at a time.
#ifndef PSTRAIN_NN_MNIST_MODEL_H_
#define PSTRAIN_NN_MNIST_MODEL_H_

#include <memory>
#include <vector>

#include "nn/conv2d.h"
#include "nn/dnnl_context.h"
#include "nn/max_pool.h"
#include "nn/mnist_head.h"
#include "nn/model.h"

namespace pstrain {
namespace nn {

class MnistModel : public Model {
 public:
  MnistModel();

  const std::vector<VariableSpec>& variables() const override { return variables_; }
  Shape example_shape() const override { return {28, 28, 1}; }
  int num_classes() const override { return 10; }
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const Tensor& images,
                                   const std::vector<int32_t>& labels,
                                   std::vector<Tensor>* grads) override;
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const Tensor& images) override;

 private:
  // Runs the network up to logits_, keeping the activations for Backward.
  Status Forward(const std::vector<Tensor>& params, const Tensor& images);

  const std::vector<VariableSpec> variables_;
  std::unique_ptr<DnnlContext> ctx_;  // borrowed by the layers below
  Conv2D conv1_, conv2_;
  MaxPool pool1_, pool2_;
  MnistHead head_;  // local3, local4, softmax_linear

  // Activations of the latest Forward (ReLUs run in place), and gradient
  // scratch; kept so each step reuses the buffers.
  Tensor a1_, p1_, a2_, p2_, logits_;
  Tensor dlogits_, dp2_, da2_, dp1_, da1_;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_MNIST_MODEL_H_
