// Sparse softmax cross-entropy, written by hand: the mean over the batch of
// -log softmax(logits)[label], and its gradient.
#ifndef PSTRAIN_NN_CPU_SOFTMAX_XENT_H_
#define PSTRAIN_NN_CPU_SOFTMAX_XENT_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {
namespace nn {
namespace cpu {

// logits [N,C], labels N values in [0,C). Returns the mean loss and, when
// dlogits is not null, writes d(loss)/d(logits) = (softmax - onehot) / N
// (resized). InvalidArgument for bad shapes or labels.
StatusOr<float> SoftmaxCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels,
                                    Tensor* dlogits);

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_SOFTMAX_XENT_H_
