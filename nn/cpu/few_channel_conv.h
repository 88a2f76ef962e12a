// FewChannelConv2D: a direct conv2d plus bias, forward and backward, for
// layers with few input channels: a network's first layer (mnist's 1,
// cifar10's 3). oneDNN 2.6 blocks its direct kernels over input channels and
// spends most of such a layer on reductions 1 or 3 wide: 4.6 ms of mnist's
// 55 ms step at batch 128.
//
// Each image is copied once, padding included, into a thread's scratch, so
// the inner loops check no bounds. Forward keeps 6 output pixels x 16 output
// channels in registers and adds each tap's weights to them; the weight
// gradient keeps up to 6 taps x 16 output channels in registers over an
// image's pixels. 16 floats are two of AVX2's 16 registers, one of
// AVX-512's 32, where both loops take 32 output channels at a time. Threads
// split the images and sum their weight gradients in thread order.
//
// Thread safety: one caller at a time.
#ifndef PSTRAIN_NN_CPU_FEW_CHANNEL_CONV_H_
#define PSTRAIN_NN_CPU_FEW_CHANNEL_CONV_H_

#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class FewChannelConv2D : public AffineKernel {
 public:
  // Whether this kernel computes the config and beats oneDNN's: at most 4
  // input channels, and output channels in whole vectors of 16.
  static bool Supports(const Conv2DConfig& config);

  // config must be Supported.
  explicit FewChannelConv2D(const Conv2DConfig& config) : config_(config) {}

  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override;
  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override;

 private:
  const Conv2DConfig config_;
  // Per OpenMP thread: a padded image, the weight and bias gradients of the
  // thread's images, and
  // the gradient of a padded image.
  std::vector<std::vector<float>> padded_, padded_grad_, dw_, db_;
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_FEW_CHANNEL_CONV_H_
