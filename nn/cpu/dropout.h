// Dropout (tf.nn.dropout): in training each element is kept with probability
// keep_prob and scaled by 1 / keep_prob, else zeroed; in evaluation it is the
// identity (the layer does not call this then).
//
// The mask comes from a counter-based hash of (seed, call number, element),
// so a run with the same seed repeats to the bit whatever the thread count.
//
// Thread safety: Forward keeps the mask for Backward; one thread at a time.
#ifndef PSTRAIN_NN_CPU_DROPOUT_H_
#define PSTRAIN_NN_CPU_DROPOUT_H_

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class Dropout : public DropoutKernel {
 public:
  // InvalidArgument unless 0 < keep_prob <= 1.
  static StatusOr<Dropout> Create(float keep_prob, uint64_t seed);

  float keep_prob() const { return keep_prob_; }
  // y = x * mask with a fresh mask; y is resized.
  Status Forward(const Tensor& x, Tensor* y) override;
  // dx = dy * mask, the latest Forward's mask. FailedPrecondition when dy's
  // shape is not that Forward's.
  Status Backward(const Tensor& dy, Tensor* dx) override;

 private:
  Dropout(float keep_prob, uint64_t seed) : keep_prob_(keep_prob), seed_(seed) {}
  float keep_prob_;
  uint64_t seed_;
  uint64_t calls_ = 0;
  Tensor mask_;  // the multipliers of the latest Forward
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_DROPOUT_H_
