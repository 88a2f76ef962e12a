#include "nn/cpu/softmax_xent.h"

#include <string>

#include "nn/cpu/tensor_util.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cpu {

StatusOr<float> SoftmaxCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels,
                                    Tensor* dlogits) {
  if (logits.rank() != 2 || logits.dim(0) != static_cast<int64_t>(labels.size()) ||
      logits.dim(0) == 0) {
    return InvalidArgument("softmax_xent: logits " + ShapeString(logits.shape()) + " for " +
                           std::to_string(labels.size()) + " labels");
  }
  const int64_t n = logits.dim(0);
  const int64_t c = logits.dim(1);
  for (int64_t i = 0; i < n; ++i) {
    if (labels[i] < 0 || labels[i] >= c) {
      return InvalidArgument("softmax_xent: label " + std::to_string(labels[i]) + " at " +
                             std::to_string(i) + " not in [0," + std::to_string(c) + ")");
    }
  }
  if (dlogits != nullptr) EnsureShape(dlogits, logits.shape());

  // (p - onehot) / n: dividing in double, as the mean's gradient.
  const double scale = 1.0 / static_cast<double>(n);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    float* grad = dlogits != nullptr ? dlogits->data() + i * c : nullptr;
    total += SoftmaxCrossEntropyRow(logits.data() + i * c, c, labels[i], scale, grad);
  }
  return static_cast<float>(total / n);
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
