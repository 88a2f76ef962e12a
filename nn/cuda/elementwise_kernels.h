// The CUDA backend's own kernels: the work that neither cuDNN nor cuBLAS
// does (ReLU on its own, bias broadcast, dropout, the loss, explicit
// padding, weight decay, the moving averages' deltas, average pooling with
// TensorFlow's uneven SAME padding). The per-element math is nn/elementwise.h,
// the CPU backend's too. Each is queued on `stream` and returns the
// launch's error, naming the kernel; pointers are device memory.
#ifndef PSTRAIN_NN_CUDA_ELEMENTWISE_KERNELS_H_
#define PSTRAIN_NN_CUDA_ELEMENTWISE_KERNELS_H_

#include <cuda_runtime_api.h>

#include <cstdint>

#include "core/status.h"

namespace pstrain {
namespace nn {
namespace cuda {

Status FillKernel(float* p, float value, int64_t n, cudaStream_t stream);
// y = max(x, 0) (y may be x); dx = dy where y > 0 (dx may be dy).
Status ReluForward(const float* x, float* y, int64_t n, cudaStream_t stream);
Status ReluBackward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream);
// out [cols, rows] = the transpose of in [rows, cols] (row-major both).
Status Transpose2D(const float* in, int64_t rows, int64_t cols, float* out, cudaStream_t stream);
// y[r, j] += b[j] over rows x c.
Status BiasAdd(float* y, const float* b, int64_t rows, int64_t c, cudaStream_t stream);
// mask = DropoutMultiplier(seed, call, i, keep_prob); y = x * mask.
Status DropoutForward(const float* x, float* mask, float* y, int64_t n, uint64_t seed,
                      uint64_t call, float keep_prob, cudaStream_t stream);
// out = a * b element by element.
Status Multiply(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream);
// Per row of logits [rows, classes]: losses[r] (double) and, when dlogits
// is set, its gradient scaled by `scale`. Labels are in range (checked by
// the caller).
Status SoftmaxCrossEntropyRows(const float* logits, const int32_t* labels, int64_t rows,
                               int64_t classes, double scale, float* dlogits, double* losses,
                               cudaStream_t stream);
// out [n, h + top + bottom, w + left + right, c] = x [n, h, w, c] with
// `value` around it.
Status PadNhwc(const float* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
               int64_t bottom, int64_t left, int64_t right, float value, float* out,
               cudaStream_t stream);
// out [n, h, w, c] = padded [n, hp, wp, c] from row `top`, column `left`.
Status CropNhwc(const float* padded, int64_t n, int64_t hp, int64_t wp, int64_t c, int64_t top,
                int64_t left, int64_t h, int64_t w, float* out, cudaStream_t stream);
// dw += wd * w over n, and *sum_sq (device, zeroed here first) = sum(w^2).
Status WeightDecay(const float* w, float wd, float* dw, int64_t n, double* sum_sq,
                   cudaStream_t stream);
// A batch norm's assign_sub deltas over c channels from the batch's mean
// and 1 / sqrt(biased variance + epsilon), the variance corrected by
// `bessel` (m / (m - 1)) as TensorFlow's moving variance is.
Status MovingAverageDeltas(const float* moving_mean, const float* moving_variance,
                           const float* batch_mean, const float* batch_inv_std, float epsilon,
                           double bessel, float momentum, float* mean_delta, float* variance_delta,
                           int64_t c, cudaStream_t stream);

// Average pooling over [n, h, w, c] with a square window, TensorFlow's
// padding (pad_top/left before; padded cells are not counted).
struct AvgPoolGeometry {
  int64_t n, h, w, c, out_h, out_w, window, stride, pad_top, pad_left;
};
Status AvgPoolForward(const AvgPoolGeometry& g, const float* x, float* y, cudaStream_t stream);
// dx (zeroed here first) from dy.
Status AvgPoolBackward(const AvgPoolGeometry& g, const float* dy, float* dx, cudaStream_t stream);

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_ELEMENTWISE_KERNELS_H_
