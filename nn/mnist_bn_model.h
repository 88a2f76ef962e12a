// MnistBnModel ("mnist_bn"): the mnist network (MODELS.md) with TensorFlow's
// batch normalization after conv1 and conv2, before their ReLUs:
// conv1 5x5x32 SAME, BN, ReLU, max pool, conv2 5x5x64 SAME, BN, ReLU, max
// pool, local3, local4, softmax_linear as in mnist.
//
// As TF code does with batch normalization, the convolutions have no biases
// (BN's beta takes their place). Each BN layer has the variables
// "<conv>/batch_normalization/{gamma,beta,moving_mean,moving_variance}"
// (initialized 1, 0, 0, 1; the moving statistics non-trainable), epsilon
// 1e-3 and momentum 0.99. LossAndGradients runs in training mode and gives
// the moving statistics' assign_sub deltas; Logits runs in inference mode.
//
// Thread safety: as Model; one thread at a time.
#ifndef PSTRAIN_NN_MNIST_BN_MODEL_H_
#define PSTRAIN_NN_MNIST_BN_MODEL_H_

#include <memory>
#include <vector>

#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dnnl_context.h"
#include "nn/max_pool.h"
#include "nn/mnist_head.h"
#include "nn/model.h"

namespace pstrain {
namespace nn {

class MnistBnModel : public Model {
 public:
  MnistBnModel();

  const std::vector<VariableSpec>& variables() const override { return variables_; }
  Shape example_shape() const override { return {28, 28, 1}; }
  int num_classes() const override { return 10; }
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const Tensor& images,
                                   const std::vector<int32_t>& labels,
                                   std::vector<Tensor>* grads) override;
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const Tensor& images) override;

  // The logits with batch statistics (training) or moving statistics
  // (inference, what Logits gives). Tests check gradients through the former.
  enum class Mode { kTraining, kInference };
  StatusOr<Tensor> LogitsIn(Mode mode, const std::vector<Tensor>& params, const Tensor& images);

 private:
  // Runs the network up to logits_, keeping the activations for Backward.
  Status Forward(Mode mode, const std::vector<Tensor>& params, const Tensor& images);

  const std::vector<VariableSpec> variables_;
  std::unique_ptr<DnnlContext> ctx_;  // borrowed by the layers below
  Conv2D conv1_, conv2_;
  BatchNorm bn1_, bn2_;
  MaxPool pool1_, pool2_;
  MnistHead head_;  // local3, local4, softmax_linear
  // Zero biases for the bias-less convolutions, and a sink for their gradients.
  const Tensor zero_bias1_, zero_bias2_;
  Tensor unused_db_;

  // Activations of the latest Forward (BN and ReLU run in place on c1_, c2_),
  // and gradient scratch; kept so each step reuses the buffers.
  Tensor c1_, p1_, c2_, p2_, logits_;
  Tensor dlogits_, dp2_, dc2_, dp1_, dc1_;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_MNIST_BN_MODEL_H_
