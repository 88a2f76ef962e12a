#include "nn/cuda/elementwise_kernels.h"

#include "nn/cuda/cuda_status.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

constexpr int kThreads = 256;

// Enough blocks for n threads, capped: the kernels loop over the rest.
int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

// Each thread of the grid takes every grid-size-th element.
#define GRID_LOOP(i, n)                                                                  \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

__global__ void Fill(float* p, float value, int64_t n) { GRID_LOOP(i, n) p[i] = value; }

__global__ void ReluForwardK(const float* x, float* y, int64_t n) {
  GRID_LOOP(i, n) y[i] = Relu(x[i]);
}

__global__ void ReluBackwardK(const float* y, const float* dy, float* dx, int64_t n) {
  GRID_LOOP(i, n) dx[i] = ReluGrad(dy[i], y[i]);
}

__global__ void TransposeK(const float* in, int64_t rows, int64_t cols, float* out) {
  GRID_LOOP(i, rows * cols) {
    const int64_t r = i / cols, c = i % cols;
    out[c * rows + r] = in[i];
  }
}

__global__ void BiasAddK(float* y, const float* b, int64_t rows, int64_t c) {
  GRID_LOOP(i, rows * c) y[i] += b[i % c];
}

__global__ void DropoutForwardK(const float* x, float* mask, float* y, int64_t n, uint64_t seed,
                                uint64_t call, float keep_prob) {
  GRID_LOOP(i, n) {
    mask[i] = DropoutMultiplier(seed, call, static_cast<uint64_t>(i), keep_prob);
    y[i] = x[i] * mask[i];
  }
}

__global__ void MultiplyK(const float* a, const float* b, float* out, int64_t n) {
  GRID_LOOP(i, n) out[i] = a[i] * b[i];
}

// A thread a row: the classes are few (10 here).
__global__ void SoftmaxXentK(const float* logits, const int32_t* labels, int64_t rows,
                             int64_t classes, double scale, float* dlogits, double* losses) {
  GRID_LOOP(r, rows) {
    losses[r] = SoftmaxCrossEntropyRow(logits + r * classes, classes, labels[r], scale,
                                       dlogits != nullptr ? dlogits + r * classes : nullptr);
  }
}

__global__ void PadK(const float* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
                     int64_t left, int64_t hp, int64_t wp, float value, float* out) {
  GRID_LOOP(i, n * hp * wp * c) {
    const int64_t ch = i % c;
    const int64_t col = (i / c) % wp - left;
    const int64_t row = (i / (c * wp)) % hp - top;
    const int64_t img = i / (c * wp * hp);
    out[i] = row >= 0 && row < h && col >= 0 && col < w ? x[((img * h + row) * w + col) * c + ch]
                                                        : value;
  }
}

__global__ void CropK(const float* padded, int64_t n, int64_t hp, int64_t wp, int64_t c,
                      int64_t top, int64_t left, int64_t h, int64_t w, float* out) {
  GRID_LOOP(i, n * h * w * c) {
    const int64_t ch = i % c;
    const int64_t col = (i / c) % w;
    const int64_t row = (i / (c * w)) % h;
    const int64_t img = i / (c * w * h);
    out[i] = padded[((img * hp + row + top) * wp + col + left) * c + ch];
  }
}

__global__ void WeightDecayK(const float* w, float wd, float* dw, int64_t n, double* sum_sq) {
  double mine = 0;
  GRID_LOOP(i, n) {
    mine += static_cast<double>(w[i]) * w[i];
    dw[i] = WeightDecayGrad(dw[i], w[i], wd);
  }
  // The block's sum, then one atomic add per block.
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(sum_sq, partial[0]);
}

__global__ void MovingAverageDeltasK(const float* moving_mean, const float* moving_variance,
                                     const float* batch_mean, const float* batch_inv_std,
                                     float epsilon, double bessel, float momentum,
                                     float* mean_delta, float* variance_delta, int64_t c) {
  GRID_LOOP(k, c) {
    const double inv = batch_inv_std[k];
    const float variance = static_cast<float>((1.0 / (inv * inv) - epsilon) * bessel);
    mean_delta[k] = MovingAverageDelta(moving_mean[k], batch_mean[k], momentum);
    variance_delta[k] = MovingAverageDelta(moving_variance[k], variance, momentum);
  }
}

// The window of output (oh, ow) clipped to the input: [h0, h1) x [w0, w1).
struct Window {
  int64_t h0, h1, w0, w1;
};
// Output element i's window, its image and its channel.
__device__ Window OutputWindow(const AvgPoolGeometry& g, int64_t i, int64_t* img, int64_t* ch) {
  *ch = i % g.c;
  const int64_t ow = (i / g.c) % g.out_w;
  const int64_t oh = (i / (g.c * g.out_w)) % g.out_h;
  *img = i / (g.c * g.out_w * g.out_h);
  Window win;
  win.h0 = oh * g.stride - g.pad_top;
  win.w0 = ow * g.stride - g.pad_left;
  win.h1 = min(win.h0 + g.window, g.h);
  win.w1 = min(win.w0 + g.window, g.w);
  win.h0 = max(win.h0, int64_t{0});
  win.w0 = max(win.w0, int64_t{0});
  return win;
}

__global__ void AvgPoolForwardK(AvgPoolGeometry g, const float* x, float* y) {
  GRID_LOOP(i, g.n * g.out_h * g.out_w * g.c) {
    int64_t img, ch;
    const Window win = OutputWindow(g, i, &img, &ch);
    float sum = 0;
    for (int64_t r = win.h0; r < win.h1; ++r) {
      for (int64_t col = win.w0; col < win.w1; ++col) {
        sum += x[((img * g.h + r) * g.w + col) * g.c + ch];
      }
    }
    y[i] = sum / static_cast<float>((win.h1 - win.h0) * (win.w1 - win.w0));
  }
}

__global__ void AvgPoolBackwardK(AvgPoolGeometry g, const float* dy, float* dx) {
  GRID_LOOP(i, g.n * g.out_h * g.out_w * g.c) {
    int64_t img, ch;
    const Window win = OutputWindow(g, i, &img, &ch);
    const float share = dy[i] / static_cast<float>((win.h1 - win.h0) * (win.w1 - win.w0));
    for (int64_t r = win.h0; r < win.h1; ++r) {
      for (int64_t col = win.w0; col < win.w1; ++col) {
        atomicAdd(&dx[((img * g.h + r) * g.w + col) * g.c + ch], share);
      }
    }
  }
}

Status Launched(const char* kernel) { return CudaStatus(cudaGetLastError(), kernel); }

}  // namespace

Status FillKernel(float* p, float value, int64_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  Fill<<<Blocks(n), kThreads, 0, stream>>>(p, value, n);
  return Launched("Fill");
}

Status ReluForward(const float* x, float* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  ReluForwardK<<<Blocks(n), kThreads, 0, stream>>>(x, y, n);
  return Launched("ReluForward");
}

Status ReluBackward(const float* y, const float* dy, float* dx, int64_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  ReluBackwardK<<<Blocks(n), kThreads, 0, stream>>>(y, dy, dx, n);
  return Launched("ReluBackward");
}

Status Transpose2D(const float* in, int64_t rows, int64_t cols, float* out, cudaStream_t stream) {
  if (rows * cols == 0) return OkStatus();
  TransposeK<<<Blocks(rows * cols), kThreads, 0, stream>>>(in, rows, cols, out);
  return Launched("Transpose2D");
}

Status BiasAdd(float* y, const float* b, int64_t rows, int64_t c, cudaStream_t stream) {
  if (rows * c == 0) return OkStatus();
  BiasAddK<<<Blocks(rows * c), kThreads, 0, stream>>>(y, b, rows, c);
  return Launched("BiasAdd");
}

Status DropoutForward(const float* x, float* mask, float* y, int64_t n, uint64_t seed,
                      uint64_t call, float keep_prob, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  DropoutForwardK<<<Blocks(n), kThreads, 0, stream>>>(x, mask, y, n, seed, call, keep_prob);
  return Launched("DropoutForward");
}

Status Multiply(const float* a, const float* b, float* out, int64_t n, cudaStream_t stream) {
  if (n == 0) return OkStatus();
  MultiplyK<<<Blocks(n), kThreads, 0, stream>>>(a, b, out, n);
  return Launched("Multiply");
}

Status SoftmaxCrossEntropyRows(const float* logits, const int32_t* labels, int64_t rows,
                               int64_t classes, double scale, float* dlogits, double* losses,
                               cudaStream_t stream) {
  if (rows == 0) return OkStatus();
  SoftmaxXentK<<<Blocks(rows), kThreads, 0, stream>>>(logits, labels, rows, classes, scale, dlogits,
                                                      losses);
  return Launched("SoftmaxCrossEntropyRows");
}

Status PadNhwc(const float* x, int64_t n, int64_t h, int64_t w, int64_t c, int64_t top,
               int64_t bottom, int64_t left, int64_t right, float value, float* out,
               cudaStream_t stream) {
  const int64_t hp = h + top + bottom, wp = w + left + right;
  if (n * hp * wp * c == 0) return OkStatus();
  PadK<<<Blocks(n * hp * wp * c), kThreads, 0, stream>>>(x, n, h, w, c, top, left, hp, wp, value,
                                                         out);
  return Launched("PadNhwc");
}

Status CropNhwc(const float* padded, int64_t n, int64_t hp, int64_t wp, int64_t c, int64_t top,
                int64_t left, int64_t h, int64_t w, float* out, cudaStream_t stream) {
  if (n * h * w * c == 0) return OkStatus();
  CropK<<<Blocks(n * h * w * c), kThreads, 0, stream>>>(padded, n, hp, wp, c, top, left, h, w, out);
  return Launched("CropNhwc");
}

Status WeightDecay(const float* w, float wd, float* dw, int64_t n, double* sum_sq,
                   cudaStream_t stream) {
  PS_RETURN_IF_ERROR(
      CudaStatus(cudaMemsetAsync(sum_sq, 0, sizeof(double), stream), "cudaMemsetAsync"));
  if (n == 0) return OkStatus();
  WeightDecayK<<<Blocks(n), kThreads, 0, stream>>>(w, wd, dw, n, sum_sq);
  return Launched("WeightDecay");
}

Status MovingAverageDeltas(const float* moving_mean, const float* moving_variance,
                           const float* batch_mean, const float* batch_inv_std, float epsilon,
                           double bessel, float momentum, float* mean_delta, float* variance_delta,
                           int64_t c, cudaStream_t stream) {
  if (c == 0) return OkStatus();
  MovingAverageDeltasK<<<Blocks(c), kThreads, 0, stream>>>(moving_mean, moving_variance, batch_mean,
                                                           batch_inv_std, epsilon, bessel, momentum,
                                                           mean_delta, variance_delta, c);
  return Launched("MovingAverageDeltas");
}

Status AvgPoolForward(const AvgPoolGeometry& g, const float* x, float* y, cudaStream_t stream) {
  const int64_t n = g.n * g.out_h * g.out_w * g.c;
  if (n == 0) return OkStatus();
  AvgPoolForwardK<<<Blocks(n), kThreads, 0, stream>>>(g, x, y);
  return Launched("AvgPoolForward");
}

Status AvgPoolBackward(const AvgPoolGeometry& g, const float* dy, float* dx, cudaStream_t stream) {
  PS_RETURN_IF_ERROR(CudaStatus(
      cudaMemsetAsync(dx, 0, static_cast<size_t>(g.n * g.h * g.w * g.c) * sizeof(float), stream),
      "cudaMemsetAsync"));
  const int64_t n = g.n * g.out_h * g.out_w * g.c;
  if (n == 0) return OkStatus();
  AvgPoolBackwardK<<<Blocks(n), kThreads, 0, stream>>>(g, dy, dx);
  return Launched("AvgPoolBackward");
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
