#include "nn/cpu/winograd_conv.h"

#include <omp.h>

#include <algorithm>

#include "nn/conv2d_shapes.h"
#include "nn/cpu/tensor_util.h"
#include "nn/cpu/winograd_f4x5.h"

namespace pstrain {
namespace nn {
namespace cpu {

using winograd::kKernel;
using winograd::kOutTile;
using winograd::kPoints;
using winograd::kTile;

namespace {

// Tiles transformed and multiplied together: the 64 products then have 24
// rows each (four of the GEMM kernel's row blocks), and a block's transformed
// input and output (64 * 24 * channels floats each, 393 KB at 64 channels)
// share a 1 MB L2 cache with a point's weights. Measured with cifar10's and
// mnist's second layers: 12 and 36 tiles run 10-30% slower than 18-24.
constexpr int64_t kTilesPerBlock = 24;
constexpr int64_t kMinInChannels = 16;
constexpr int kPad = (kKernel - 1) / 2;  // SAME padding of a 5x5 kernel at stride 1

// The 4x4 output tiles of a batch, numbered image by image, row by row.
struct TileGrid {
  explicit TileGrid(const Shape& x)
      : n(x[0]),
        h(x[1]),
        w(x[2]),
        tiles_h((h + kOutTile - 1) / kOutTile),
        tiles_w((w + kOutTile - 1) / kOutTile) {}
  int64_t tiles() const { return n * tiles_h * tiles_w; }
  int64_t blocks() const { return (tiles() + kTilesPerBlock - 1) / kTilesPerBlock; }

  struct Tile {
    int64_t image, y, x;  // the first output pixel
    int rows, cols;       // output pixels that exist: fewer at the far edges
  };
  Tile At(int64_t t) const {
    Tile tile;
    tile.image = t / (tiles_h * tiles_w);
    const int64_t rest = t % (tiles_h * tiles_w);
    tile.y = rest / tiles_w * kOutTile;
    tile.x = rest % tiles_w * kOutTile;
    tile.rows = static_cast<int>(std::min<int64_t>(kOutTile, h - tile.y));
    tile.cols = static_cast<int>(std::min<int64_t>(kOutTile, w - tile.x));
    return tile;
  }
  // Offset of pixel (y, x) of an image in an NHWC tensor of `channels`.
  int64_t Offset(int64_t image, int64_t y, int64_t x, int64_t channels) const {
    return ((image * h + y) * w + x) * channels;
  }

  const int64_t n, h, w, tiles_h, tiles_w;
};

// The 8x8 input tile under an output tile: a view into x where it lies wholly
// inside the image, else a copy in buf with the SAME padding's zeros.
winograd::PixelTile InputTile(const TileGrid& g, const TileGrid::Tile& tile, const float* x,
                              int64_t channels, float* buf) {
  const int64_t y0 = tile.y - kPad, x0 = tile.x - kPad;
  if (y0 >= 0 && x0 >= 0 && y0 + kTile <= g.h && x0 + kTile <= g.w) {
    return {x + g.Offset(tile.image, y0, x0, channels), g.w * channels, channels};
  }
  std::fill(buf, buf + kPoints * channels, 0.0f);
  for (int r = 0; r < kTile; ++r) {
    const int64_t y = y0 + r;
    if (y < 0 || y >= g.h) continue;
    for (int s = 0; s < kTile; ++s) {
      const int64_t xs = x0 + s;
      if (xs < 0 || xs >= g.w) continue;
      const float* src = x + g.Offset(tile.image, y, xs, channels);
      std::copy(src, src + channels, buf + (r * kTile + s) * channels);
    }
  }
  return {buf, kTile * channels, channels};
}

// db[o], the sum of dy[..., o] over every pixel of the batch, in double: the
// pixels split between the threads (a batch of mnist's conv2 holds 1.6 M
// values, a millisecond on one thread while the other waits), each thread's
// sums added in thread order.
void BiasGradient(const float* dy, int64_t pixels, int64_t out, float* db) {
  const int threads = omp_get_max_threads();
  std::vector<double> partial(static_cast<size_t>(threads) * out, 0.0);
#pragma omp parallel
  {
    // Summed in memory of the thread's own, copied out once: sums side by
    // side in `partial` would share a cache line at their boundary.
    std::vector<double> sums(out, 0.0);
#pragma omp for schedule(static)
    for (int64_t pixel = 0; pixel < pixels; ++pixel) {
      const float* d = dy + pixel * out;
#pragma omp simd
      for (int64_t o = 0; o < out; ++o) sums[o] += d[o];
    }
    std::copy(sums.begin(), sums.end(),
              partial.begin() + static_cast<int64_t>(omp_get_thread_num()) * out);
  }
  for (int64_t o = 0; o < out; ++o) {
    double total = 0;
    for (int t = 0; t < threads; ++t) total += partial[t * out + o];
    db[o] = static_cast<float>(total);
  }
}

}  // namespace

bool WinogradConv2D::Supports(const Conv2DConfig& c) {
  return c.kernel_h == kKernel && c.kernel_w == kKernel && c.stride == 1 &&
         c.padding == Padding::kSame && c.in_channels >= kMinInChannels && c.out_channels > 0;
}

WinogradConv2D::WinogradConv2D(const Conv2DConfig& config, GemmPath path)
    : config_(config), path_(path) {}

WinogradConv2D::Scratch& WinogradConv2D::ThreadScratch(int64_t in, int64_t out) {
  Scratch& s = scratch_[omp_get_thread_num()];
  s.tile.resize(kPoints * in);
  s.tmp.resize(kPoints * std::max(in, out));
  s.v.resize(kPoints * kTilesPerBlock * in);
  s.m.resize(kPoints * kTilesPerBlock * out);
  return s;
}

void WinogradConv2D::Convolve(const Shape& x_shape, const float* x, const float* u, int64_t out,
                              const float* bias, float* y) {
  constexpr int64_t T = kTilesPerBlock;
  const TileGrid g(x_shape);
  const int64_t in = x_shape[3];
  scratch_.resize(omp_get_max_threads());
#pragma omp parallel
  {
    Scratch& s = ThreadScratch(in, out);
#pragma omp for schedule(static)
    for (int64_t block = 0; block < g.blocks(); ++block) {
      const int64_t first = block * T;
      const int64_t count = std::min(T, g.tiles() - first);
      for (int64_t t = 0; t < count; ++t) {
        winograd::InputTransform(InputTile(g, g.At(first + t), x, in, s.tile.data()), in,
                                 s.tmp.data(), s.v.data() + t * in, T * in);
      }
      for (int p = 0; p < kPoints; ++p) {
        SmallGemm({count, out, in, s.v.data() + p * T * in, in, 1, u + p * in * out, out,
                   s.m.data() + p * T * out, out, /*accumulate=*/false},
                  path_);
      }
      for (int64_t t = 0; t < count; ++t) {
        const TileGrid::Tile tile = g.At(first + t);
        winograd::OutputTransform(s.m.data() + t * out, T * out, out, bias, s.tmp.data(),
                                  y + g.Offset(tile.image, tile.y, tile.x, out), g.w * out, out,
                                  tile.rows, tile.cols);
      }
    }
  }
}

void WinogradConv2D::WeightGradient(const Shape& x_shape, const float* x, const float* dy,
                                    float* dw) {
  constexpr int64_t T = kTilesPerBlock;
  const TileGrid g(x_shape);
  const int64_t in = config_.in_channels, out = config_.out_channels;
  scratch_.resize(omp_get_max_threads());
  int team = 1;
#pragma omp parallel
  {
    Scratch& s = ThreadScratch(in, out);
    s.du.assign(kPoints * in * out, 0.0f);
#pragma omp single nowait
    team = omp_get_num_threads();
#pragma omp for schedule(static)
    for (int64_t block = 0; block < g.blocks(); ++block) {
      const int64_t first = block * T;
      const int64_t count = std::min(T, g.tiles() - first);
      for (int64_t t = 0; t < count; ++t) {
        const TileGrid::Tile tile = g.At(first + t);
        winograd::InputTransform(InputTile(g, tile, x, in, s.tile.data()), in, s.tmp.data(),
                                 s.v.data() + t * in, T * in);
        const winograd::PixelTile dy_tile = {dy + g.Offset(tile.image, tile.y, tile.x, out),
                                             g.w * out, out};
        winograd::OutputGradTransform(dy_tile, tile.rows, tile.cols, out, s.tmp.data(),
                                      s.m.data() + t * out, T * out);
      }
      // du[p] (in x out) += v[p]^T (in x count) m[p] (count x out).
      for (int p = 0; p < kPoints; ++p) {
        SmallGemm({in, out, count, s.v.data() + p * T * in, 1, in, s.m.data() + p * T * out, out,
                   s.du.data() + p * in * out, out, /*accumulate=*/true},
                  path_);
      }
    }
  }
  // Each thread summed its own tiles; add the sums up and transform them back
  // once.
  du_sum_ = scratch_[0].du;
  for (int i = 1; i < team; ++i) {
    const std::vector<float>& du = scratch_[i].du;
    for (size_t j = 0; j < du_sum_.size(); ++j) du_sum_[j] += du[j];
  }
  weight_tmp_.resize(kTile * kKernel * out);
  winograd::WeightGradTransform(du_sum_.data(), in, out, weight_tmp_.data(), dw);
}

Status WinogradConv2D::Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckConv2DOperands(config_, x, w, &b, nullptr));
  const int64_t in = config_.in_channels, out = config_.out_channels;
  EnsureShape(y, Conv2DOutputShape(config_, x.shape()));
  u_.resize(kPoints * in * out);
  weight_tmp_.resize(kTile * kKernel * out);
  winograd::WeightTransform(w.data(), in, out, weight_tmp_.data(), u_.data());
  Convolve(x.shape(), x.data(), u_.data(), out, b.data(), y->data());
  return OkStatus();
}

Status WinogradConv2D::Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx,
                                Tensor* dw, Tensor* db) {
  PS_RETURN_IF_ERROR(CheckConv2DOperands(config_, x, w, nullptr, &dy));
  const int64_t in = config_.in_channels, out = config_.out_channels;
  if (dx != nullptr) {
    // dx is the SAME correlation of dy with the kernel turned half a turn
    // and its channels swapped: flipped[ky][kx][o][i] = w[4-ky][4-kx][i][o].
    flipped_.resize(kKernel * kKernel * in * out);
    for (int ky = 0; ky < kKernel; ++ky) {
      for (int kx = 0; kx < kKernel; ++kx) {
        const float* src =
            w.data() + ((kKernel - 1 - ky) * kKernel + (kKernel - 1 - kx)) * in * out;
        float* dst = flipped_.data() + (ky * kKernel + kx) * out * in;
        for (int64_t i = 0; i < in; ++i) {
          for (int64_t o = 0; o < out; ++o) dst[o * in + i] = src[i * out + o];
        }
      }
    }
    u_.resize(kPoints * in * out);
    weight_tmp_.resize(kTile * kKernel * in);
    winograd::WeightTransform(flipped_.data(), out, in, weight_tmp_.data(), u_.data());
    EnsureShape(dx, x.shape());
    Convolve(dy.shape(), dy.data(), u_.data(), in, nullptr, dx->data());
  }
  EnsureShape(dw, w.shape());
  WeightGradient(x.shape(), x.data(), dy.data(), dw->data());
  EnsureShape(db, {out});
  BiasGradient(dy.data(), dy.size() / out, out, db->data());
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
