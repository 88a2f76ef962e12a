#include "nn/cpu/softmax_xent.h"

#include <cmath>
#include <string>

#include "nn/cpu/tensor_util.h"

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

  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const float* row = logits.data() + i * c;
    // Subtract the max so exp() cannot overflow; log-sum-exp in double.
    float max = row[0];
    for (int64_t j = 1; j < c; ++j) max = std::fmax(max, row[j]);
    double sum = 0;
    for (int64_t j = 0; j < c; ++j) sum += std::exp(static_cast<double>(row[j] - max));
    double log_sum = std::log(sum);
    total += log_sum - (row[labels[i]] - max);
    if (dlogits != nullptr) {
      float* g = dlogits->data() + i * c;
      for (int64_t j = 0; j < c; ++j) {
        double p = std::exp(static_cast<double>(row[j] - max) - log_sum);
        g[j] = static_cast<float>((p - (j == labels[i] ? 1.0 : 0.0)) / n);
      }
    }
  }
  return static_cast<float>(total / n);
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
