// WinogradConv2D: a 5x5, stride-1, SAME conv2d plus bias by Winograd's
// F(4x4, 5x5) (nn/cpu/winograd_f4x5.h), forward and backward: 64 small matrix
// products per block of tiles where the direct method does 6.25 times the
// multiplications. oneDNN 2.6 has Winograd only for 3x3 kernels on AVX-512;
// cifar10's and mnist's second convolutions are 5x5 and spend most of a
// training step in the direct method.
//
// Backward data is the forward pass over dy with the kernel turned half a
// turn and its channels swapped; backward weights sums, over tiles, the
// transformed input times the transformed output gradient, and transforms
// the sum back once.
//
// Thread safety: one caller at a time; each call splits its tiles among the
// OpenMP threads, each with scratch of its own.
#ifndef PSTRAIN_NN_CPU_WINOGRAD_CONV_H_
#define PSTRAIN_NN_CPU_WINOGRAD_CONV_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/cpu/small_gemm.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {
namespace cpu {

class WinogradConv2D : public AffineKernel {
 public:
  // Whether the config is one this kernel computes, and one where it beats
  // the direct method: with few input channels (cifar10's first layer has
  // 3) the transforms cost more than they save.
  static bool Supports(const Conv2DConfig& config);

  // config must be Supported. path picks the matrix kernel (tests run both).
  explicit WinogradConv2D(const Conv2DConfig& config, GemmPath path = GemmPath::kBest);

  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override;
  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override;

 private:
  struct Scratch {
    std::vector<float> tile, tmp, v, m, du;
  };

  // y = the SAME correlation of x (shape [N,H,W,in]) with transformed
  // weights u (in -> out channels), plus bias when not null.
  void Convolve(const Shape& x_shape, const float* x, const float* u, int64_t out,
                const float* bias, float* y);
  // dw from x and dy (the bias gradient aside).
  void WeightGradient(const Shape& x_shape, const float* x, const float* dy, float* dw);
  // The calling OpenMP thread's scratch, sized for a pass from `in` to `out`
  // channels; scratch_ is sized before each parallel region.
  Scratch& ThreadScratch(int64_t in, int64_t out);

  const Conv2DConfig config_;
  const GemmPath path_;
  std::vector<float> u_, flipped_, weight_tmp_, du_sum_;
  std::vector<Scratch> scratch_;  // one per OpenMP thread
};

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_WINOGRAD_CONV_H_
