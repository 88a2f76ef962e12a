// MnistHead: the dense layers both mnist networks end with (MODELS.md):
// local3 (3136 -> 1024, ReLU), local4 (1024 -> 10, ReLU) and softmax_linear
// (10 -> 10, logits). Its six variables lie back to back in the model's
// params, from local3/weights to softmax_linear/biases, starting at `first`.
//
// Keeps its activations between Forward and Backward: one thread at a time.
#ifndef PSTRAIN_NN_MNIST_HEAD_H_
#define PSTRAIN_NN_MNIST_HEAD_H_

#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/dense.h"
#include "nn/dnnl_context.h"
#include "nn/model.h"

namespace pstrain {
namespace nn {

class MnistHead {
 public:
  // The head's six variables, in order, with MODELS.md's initializers.
  static std::vector<VariableSpec> Variables();

  // Borrows ctx. `first` is the index of local3/weights in the params.
  MnistHead(DnnlContext* ctx, int first);

  // features: pool2's output [N,7,7,64], read in TF's NHWC flatten order.
  Status Forward(const Tensor& features, const std::vector<Tensor>& params, Tensor* logits);
  // After Forward on the same features: the gradients of the head's six
  // variables into (*grads)[first..first+5] and d(loss)/d(features).
  Status Backward(const Tensor& features, const std::vector<Tensor>& params, const Tensor& dlogits,
                  Tensor* dfeatures, std::vector<Tensor>* grads);

 private:
  const int first_;
  Dense local3_, local4_, softmax_linear_;
  Tensor a3_, a4_, da3_, da4_;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_MNIST_HEAD_H_
