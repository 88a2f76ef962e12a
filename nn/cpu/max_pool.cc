#include "nn/cpu/max_pool.h"

#include <algorithm>
#include <vector>

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

// One output row's pixels, each the max of its window's real cells and
// (kWinners) the cell that holds it, channel by channel. The first real
// cell starts both, so a window of NaNs or -infs still names a real cell.
// A whole row per call, its windows' spans worked out once per pass: a
// call (through the clones' dispatch) and a span for every pixel took
// twice the time of the pool's backward.
template <bool kWinners>
inline void PoolRow(const float* x, const Geometry& g, const WindowSpan& rows,
                    const WindowSpan* cols, float* y, int32_t* won) {
  const int64_t c = g.c;
  for (int64_t ow = 0; ow < g.w.out; ++ow, y += c, won += kWinners ? c : 0) {
    const WindowSpan& span = cols[ow];
    const float* first = x + (rows.begin * g.wi + span.begin) * c;
    const int32_t first_cell =
        static_cast<int32_t>((rows.begin - rows.start) * g.window + (span.begin - span.start));
#pragma omp simd
    for (int64_t k = 0; k < c; ++k) {
      y[k] = first[k];
      if (kWinners) won[k] = first_cell;
    }
    for (int64_t r = rows.begin; r < rows.end; ++r) {
      for (int64_t q = span.begin; q < span.end; ++q) {
        const float* xp = x + (r * g.wi + q) * c;
        const int32_t cell = static_cast<int32_t>((r - rows.start) * g.window + (q - span.start));
#pragma omp simd
        for (int64_t k = 0; k < c; ++k) {
          const bool better = xp[k] > y[k];
          y[k] = better ? xp[k] : y[k];
          if (kWinners) won[k] = better ? cell : won[k];
        }
      }
    }
  }
}

PSTRAIN_CLONES void PoolRowWithWinners(const float* x, const Geometry& g, const WindowSpan& rows,
                                       const WindowSpan* cols, float* y, int32_t* won) {
  PoolRow<true>(x, g, rows, cols, y, won);
}

PSTRAIN_CLONES void PoolRowOnly(const float* x, const Geometry& g, const WindowSpan& rows,
                                const WindowSpan* cols, float* y) {
  PoolRow<false>(x, g, rows, cols, y, nullptr);
}

// One output row's gradients to their windows' cells, where windows tile
// the input (stride == window, every cell in one): the winner gets it, the
// others 0, each cell written once.
PSTRAIN_CLONES void SpreadRow(const Geometry& g, const WindowSpan& rows, const WindowSpan* cols,
                              const float* dy, const int32_t* won, float* dx) {
  const int64_t c = g.c;
  for (int64_t ow = 0; ow < g.w.out; ++ow, dy += c, won += c) {
    const WindowSpan& span = cols[ow];
    for (int64_t r = rows.begin; r < rows.end; ++r) {
      for (int64_t q = span.begin; q < span.end; ++q) {
        float* dxp = dx + (r * g.wi + q) * c;
        const int32_t cell = static_cast<int32_t>((r - rows.start) * g.window + (q - span.start));
#pragma omp simd
        for (int64_t k = 0; k < c; ++k) dxp[k] = won[k] == cell ? dy[k] : 0.0f;
      }
    }
  }
}

// Each output row's window spans (rows) and each output column's (cols).
void SpansOf(const Geometry& g, std::vector<WindowSpan>* rows, std::vector<WindowSpan>* cols) {
  for (int64_t oh = 0; oh < g.h.out; ++oh) {
    rows->push_back(CoveredCells(oh, g.h, g.window, g.stride, g.hi));
  }
  for (int64_t ow = 0; ow < g.w.out; ++ow) {
    cols->push_back(CoveredCells(ow, g.w, g.window, g.stride, g.wi));
  }
}

// visit(image, oh, offset) for every output row of every image (offset: of
// its first value in the output), the rows split among the threads.
template <typename Visit>
void ForEachRow(const Geometry& g, Visit visit) {
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t b = 0; b < g.n; ++b) {
    for (int64_t oh = 0; oh < g.h.out; ++oh) visit(b, oh, (b * g.h.out + oh) * g.w.out * g.c);
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
  std::vector<int32_t>& won = winners_[x.shape()];
  EnsureShape(y, OutputShape(x.shape()));
  won.resize(y->size());
  Pool(x, y, won.data());
  return OkStatus();
}

Status MaxPool::Infer(const Tensor& x, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckInput(x.shape()));
  EnsureShape(y, OutputShape(x.shape()));
  Pool(x, y, nullptr);
  return OkStatus();
}

void MaxPool::Pool(const Tensor& x, Tensor* y, int32_t* won) const {
  const Geometry g = GeometryOf(x.shape(), config_);
  std::vector<WindowSpan> rows, cols;
  SpansOf(g, &rows, &cols);
  const int64_t image = g.hi * g.wi * g.c;
  ForEachRow(g, [&](int64_t b, int64_t oh, int64_t o) {
    if (won != nullptr) {
      PoolRowWithWinners(x.data() + b * image, g, rows[oh], cols.data(), y->data() + o, won + o);
    } else {
      PoolRowOnly(x.data() + b * image, g, rows[oh], cols.data(), y->data() + o);
    }
  });
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
    std::vector<WindowSpan> rows, cols;
    SpansOf(g, &rows, &cols);
    ForEachRow(g, [&](int64_t b, int64_t oh, int64_t o) {
      SpreadRow(g, rows[oh], cols.data(), dy.data() + o, won + o, dx->data() + b * image);
    });
  } else {
    ScatterBackward(g, dy.data(), it->second.data(), dx->data());
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
