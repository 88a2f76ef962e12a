#include "nn/cpu/max_pool.h"

#include <algorithm>

#include "nn/cpu/clones.h"
#include "nn/cpu/tensor_util.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

struct Geometry {
  int64_t n, hi, wi, c;
  WindowDim h, w;
  int64_t window, stride;
};

Geometry GeometryOf(const Shape& x, const PoolConfig& config) {
  return {x[0],
          x[1],
          x[2],
          x[3],
          ComputeWindow(x[1], config.window, config.stride, config.padding),
          ComputeWindow(x[2], config.window, config.stride, config.padding),
          config.window,
          config.stride};
}

// One output pixel's channels: the max of its window's real cells and the
// cell that holds it. The first real cell starts both, so a window of NaNs
// or -infs still names a real cell.
PSTRAIN_CLONES void PoolPixel(const float* x, const Geometry& g, const WindowSpan& rows,
                              const WindowSpan& cols, float* y, int32_t* won) {
  const int64_t c = g.c;
  const float* first = x + (rows.begin * g.wi + cols.begin) * c;
  const int32_t first_cell =
      static_cast<int32_t>((rows.begin - rows.start) * g.window + (cols.begin - cols.start));
  std::copy(first, first + c, y);
  std::fill(won, won + c, first_cell);
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    for (int64_t q = cols.begin; q < cols.end; ++q) {
      const float* xp = x + (r * g.wi + q) * c;
      const int32_t cell = static_cast<int32_t>((r - rows.start) * g.window + (q - cols.start));
#pragma omp simd
      for (int64_t k = 0; k < c; ++k) {
        const bool better = xp[k] > y[k];
        y[k] = better ? xp[k] : y[k];
        won[k] = better ? cell : won[k];
      }
    }
  }
}

// A window's gradient to its cells, where windows tile the input
// (stride == window, every cell in one): the winner gets it, the others 0,
// each cell written once.
PSTRAIN_CLONES void SpreadPixel(const Geometry& g, const WindowSpan& rows, const WindowSpan& cols,
                                const float* dy, const int32_t* won, float* dx) {
  for (int64_t r = rows.begin; r < rows.end; ++r) {
    for (int64_t q = cols.begin; q < cols.end; ++q) {
      float* dxp = dx + (r * g.wi + q) * g.c;
      const int32_t cell = static_cast<int32_t>((r - rows.start) * g.window + (q - cols.start));
#pragma omp simd
      for (int64_t k = 0; k < g.c; ++k) dxp[k] = won[k] == cell ? dy[k] : 0.0f;
    }
  }
}

// visit(image, rows, cols, offset) for every output pixel (offset: of its
// first channel in the output), the output rows split among the threads.
template <typename Visit>
void ForEachWindow(const Geometry& g, Visit visit) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t oh = 0; oh < g.h.out; ++oh) {
      const WindowSpan rows = CoveredCells(oh, g.h, g.window, g.stride, g.hi);
      for (int64_t ow = 0; ow < g.w.out; ++ow) {
        const WindowSpan cols = CoveredCells(ow, g.w, g.window, g.stride, g.wi);
        visit(b, rows, cols, ((b * g.h.out + oh) * g.w.out + ow) * g.c);
      }
    }
  }
}

// Overlapping windows, or cells in none: dx starts at 0 and each output adds
// its gradient to its winner. Windows overlap within an image, so threads
// split the batch only.
void ScatterBackward(const Geometry& g, const float* dy, const int32_t* won, float* dx) {
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < g.n; ++b) {
    float* image = dx + b * g.hi * g.wi * g.c;
    std::fill(image, image + g.hi * g.wi * g.c, 0.0f);
    for (int64_t oh = 0; oh < g.h.out; ++oh) {
      const int64_t row0 = oh * g.stride - g.h.pad_before;
      for (int64_t ow = 0; ow < g.w.out; ++ow) {
        const int64_t col0 = ow * g.stride - g.w.pad_before;
        const int64_t o = ((b * g.h.out + oh) * g.w.out + ow) * g.c;
        for (int64_t k = 0; k < g.c; ++k) {
          const int64_t r = row0 + won[o + k] / g.window;
          const int64_t q = col0 + won[o + k] % g.window;
          image[(r * g.wi + q) * g.c + k] += dy[o + k];
        }
      }
    }
  }
}

}  // namespace

Shape MaxPool::OutputShape(const Shape& x) const {
  WindowDim h = ComputeWindow(x[1], config_.window, config_.stride, config_.padding);
  WindowDim w = ComputeWindow(x[2], config_.window, config_.stride, config_.padding);
  return {x[0], h.out, w.out, x[3]};
}

Status MaxPool::CheckInput(const Shape& x) const {
  if (x.size() != 4) return InvalidArgument("max_pool: input " + ShapeString(x) + " is not NHWC");
  Shape y = OutputShape(x);
  if (y[1] <= 0 || y[2] <= 0) {
    return InvalidArgument("max_pool: input " + ShapeString(x) + " smaller than the window");
  }
  return OkStatus();
}

Status MaxPool::Forward(const Tensor& x, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckInput(x.shape()));
  const Geometry g = GeometryOf(x.shape(), config_);
  EnsureShape(y, OutputShape(x.shape()));
  std::vector<int32_t>& won = winners_[x.shape()];
  won.resize(y->size());
  const int64_t image = g.hi * g.wi * g.c;
  ForEachWindow(g, [&](int64_t b, const WindowSpan& rows, const WindowSpan& cols, int64_t o) {
    PoolPixel(x.data() + b * image, g, rows, cols, y->data() + o, won.data() + o);
  });
  return OkStatus();
}

Status MaxPool::Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) {
  PS_RETURN_IF_ERROR(CheckInput(x_shape));
  auto it = winners_.find(x_shape);
  if (it == winners_.end()) {
    return FailedPrecondition("max_pool: Backward before Forward on " + ShapeString(x_shape));
  }
  if (dy.shape() != OutputShape(x_shape)) {
    return InvalidArgument("max_pool: output gradient " + ShapeString(dy.shape()) + ", want " +
                           ShapeString(OutputShape(x_shape)));
  }
  const Geometry g = GeometryOf(x_shape, config_);
  EnsureShape(dx, x_shape);
  // With stride == window the windows are disjoint; they cover the whole
  // input when the last one reaches its end.
  const bool tiled = config_.stride == config_.window &&
                     g.h.out * g.stride - g.h.pad_before >= g.hi &&
                     g.w.out * g.stride - g.w.pad_before >= g.wi;
  if (tiled) {
    const int32_t* won = it->second.data();
    const int64_t image = g.hi * g.wi * g.c;
    ForEachWindow(g, [&](int64_t b, const WindowSpan& rows, const WindowSpan& cols, int64_t o) {
      SpreadPixel(g, rows, cols, dy.data() + o, won + o, dx->data() + b * image);
    });
  } else {
    ScatterBackward(g, dy.data(), it->second.data(), dx->data());
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
