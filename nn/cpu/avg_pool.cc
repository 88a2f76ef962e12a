#include "nn/cpu/avg_pool.h"

#include <algorithm>

namespace pstrain {
namespace nn {
namespace cpu {
Shape AvgPool::OutputShape(const Shape& x) const {
  const WindowDim h = ComputeWindow(x[1], config_.window, config_.stride, config_.padding);
  const WindowDim w = ComputeWindow(x[2], config_.window, config_.stride, config_.padding);
  return {x[0], h.out, w.out, x[3]};
}

Status AvgPool::Forward(const Tensor& x, Tensor* y) {
  if (x.rank() != 4)
    return InvalidArgument("avg_pool: x must be NHWC, got " + ShapeString(x.shape()));
  const Shape out = OutputShape(x.shape());
  if (y->shape() != out) *y = Tensor(out, Tensor::kUninitialized);
  const int64_t n = x.dim(0), hi = x.dim(1), wi = x.dim(2), c = x.dim(3);
  const WindowDim hd = ComputeWindow(hi, config_.window, config_.stride, config_.padding);
  const WindowDim wd = ComputeWindow(wi, config_.window, config_.stride, config_.padding);
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oh = 0; oh < hd.out; ++oh) {
      const WindowSpan rows = CoveredCells(oh, hd, config_.window, config_.stride, hi);
      for (int64_t ow = 0; ow < wd.out; ++ow) {
        const WindowSpan cols = CoveredCells(ow, wd, config_.window, config_.stride, wi);
        float* yp = y->data() + ((b * hd.out + oh) * wd.out + ow) * c;
        std::fill(yp, yp + c, 0.0f);
        for (int64_t r = rows.begin; r < rows.end; ++r) {
          for (int64_t q = cols.begin; q < cols.end; ++q) {
            const float* xp = x.data() + ((b * hi + r) * wi + q) * c;
            for (int64_t k = 0; k < c; ++k) yp[k] += xp[k];
          }
        }
        const float inv =
            1.0f / static_cast<float>((rows.end - rows.begin) * (cols.end - cols.begin));
        for (int64_t k = 0; k < c; ++k) yp[k] *= inv;
      }
    }
  }
  return OkStatus();
}

Status AvgPool::Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) {
  if (x_shape.size() != 4 || dy.shape() != OutputShape(x_shape)) {
    return InvalidArgument("avg_pool: dy has shape " + ShapeString(dy.shape()) +
                           ", the output of " + ShapeString(x_shape) + " is " +
                           (x_shape.size() == 4 ? ShapeString(OutputShape(x_shape)) : "not NHWC"));
  }
  if (dx->shape() != x_shape) *dx = Tensor(x_shape, Tensor::kUninitialized);
  dx->Fill(0.0f);
  const int64_t n = x_shape[0], hi = x_shape[1], wi = x_shape[2], c = x_shape[3];
  const WindowDim hd = ComputeWindow(hi, config_.window, config_.stride, config_.padding);
  const WindowDim wd = ComputeWindow(wi, config_.window, config_.stride, config_.padding);
  // Windows overlap within an image, so threads split the batch only.
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t oh = 0; oh < hd.out; ++oh) {
      const WindowSpan rows = CoveredCells(oh, hd, config_.window, config_.stride, hi);
      for (int64_t ow = 0; ow < wd.out; ++ow) {
        const WindowSpan cols = CoveredCells(ow, wd, config_.window, config_.stride, wi);
        const float* dyp = dy.data() + ((b * hd.out + oh) * wd.out + ow) * c;
        const float inv =
            1.0f / static_cast<float>((rows.end - rows.begin) * (cols.end - cols.begin));
        for (int64_t r = rows.begin; r < rows.end; ++r) {
          for (int64_t q = cols.begin; q < cols.end; ++q) {
            float* dxp = dx->data() + ((b * hi + r) * wi + q) * c;
            for (int64_t k = 0; k < c; ++k) dxp[k] += dyp[k] * inv;
          }
        }
      }
    }
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
