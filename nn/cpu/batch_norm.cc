#include "nn/cpu/batch_norm.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nn/cpu/tensor_util.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cpu {

namespace {

// Per channel, the sum over the m rows of term(r, k), in double. The rows go
// in fixed blocks to the OpenMP threads and the blocks' sums are added in
// order, so the result is the same at any number of threads.
template <typename Term>
std::vector<double> ChannelSums(int64_t m, int64_t c, const Term& term) {
  constexpr int64_t kRowsPerBlock = 1024;
  const int64_t blocks = (m + kRowsPerBlock - 1) / kRowsPerBlock;
  std::vector<double> partial(static_cast<size_t>(blocks * c), 0.0);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    double* p = partial.data() + b * c;
    const int64_t end = std::min(m, (b + 1) * kRowsPerBlock);
    for (int64_t r = b * kRowsPerBlock; r < end; ++r) {
      for (int64_t k = 0; k < c; ++k) p[k] += term(r, k);
    }
  }
  std::vector<double> sum(c, 0.0);
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t k = 0; k < c; ++k) sum[k] += partial[b * c + k];
  }
  return sum;
}

}  // namespace

BatchNorm::BatchNorm(const BatchNormConfig& config) : config_(config) {}

Status BatchNorm::CheckParams(const Tensor& x, const std::vector<const Tensor*>& params) const {
  const int64_t c = config_.channels;
  if (x.rank() < 2 || x.shape().back() != c || x.size() == 0) {
    return InvalidArgument("batch norm: input " + ShapeString(x.shape()) + ", want [..., " +
                           std::to_string(c) + "]");
  }
  for (const Tensor* p : params) {
    if (p->shape() != Shape{c}) {
      return InvalidArgument("batch norm: parameter " + ShapeString(p->shape()) + ", want [" +
                             std::to_string(c) + "]");
    }
  }
  return OkStatus();
}

Status BatchNorm::ForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                  Tensor* y) {
  PS_RETURN_IF_ERROR(CheckParams(x, {&gamma, &beta}));
  const int64_t c = config_.channels;
  const int64_t m = x.size() / c;
  const float* in = x.data();
  // Two passes in double: the mean, then the biased variance about it.
  const std::vector<double> sum =
      ChannelSums(m, c, [&](int64_t r, int64_t k) { return double{in[r * c + k]}; });
  mean_.resize(c);
  for (int64_t k = 0; k < c; ++k) mean_[k] = static_cast<float>(sum[k] / m);
  const std::vector<double> sq = ChannelSums(m, c, [&](int64_t r, int64_t k) {
    const double d = in[r * c + k] - static_cast<double>(mean_[k]);
    return d * d;
  });
  variance_.resize(c);
  inv_std_.resize(c);
  const double bessel = m > 1 ? static_cast<double>(m) / (m - 1) : 1.0;
  for (int64_t k = 0; k < c; ++k) {
    const double var = sq[k] / m;
    variance_[k] = static_cast<float>(var * bessel);
    inv_std_[k] = static_cast<float>(1.0 / std::sqrt(var + config_.epsilon));
  }

  EnsureShape(&x_hat_, x.shape());
  if (y != &x) EnsureShape(y, x.shape());
  float* xh = x_hat_.data();
  float* out = y->data();
  const float* g = gamma.data();
  const float* b = beta.data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t k = 0; k < c; ++k) {
      const int64_t i = r * c + k;
      xh[i] = BatchNormNormalize(in[i], mean_[k], inv_std_[k]);
      out[i] = BatchNormScale(xh[i], g[k], b[k]);
    }
  }
  return OkStatus();
}

Status BatchNorm::ForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                                   const Tensor& moving_mean, const Tensor& moving_variance,
                                   Tensor* y) {
  PS_RETURN_IF_ERROR(CheckParams(x, {&gamma, &beta, &moving_mean, &moving_variance}));
  const int64_t c = config_.channels;
  const int64_t m = x.size() / c;
  std::vector<float> inv_std(c);
  for (int64_t k = 0; k < c; ++k) {
    inv_std[k] = 1.0f / std::sqrt(moving_variance[k] + config_.epsilon);
  }
  if (y != &x) EnsureShape(y, x.shape());
  const float* in = x.data();
  float* out = y->data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t k = 0; k < c; ++k) {
      const int64_t i = r * c + k;
      out[i] =
          BatchNormScale(BatchNormNormalize(in[i], moving_mean[k], inv_std[k]), gamma[k], beta[k]);
    }
  }
  return OkStatus();
}

Status BatchNorm::Backward(const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor* dgamma,
                           Tensor* dbeta) {
  if (x_hat_.size() == 0 || dy.shape() != x_hat_.shape()) {
    return FailedPrecondition("batch norm: backward of " + ShapeString(dy.shape()) +
                              " without a training forward of that shape");
  }
  PS_RETURN_IF_ERROR(CheckParams(dy, {&gamma}));
  const int64_t c = config_.channels;
  const int64_t m = dy.size() / c;
  const float* g = dy.data();
  const float* xh = x_hat_.data();
  const std::vector<double> sum_dy =
      ChannelSums(m, c, [&](int64_t r, int64_t k) { return double{g[r * c + k]}; });
  const std::vector<double> sum_dy_xhat = ChannelSums(m, c, [&](int64_t r, int64_t k) {
    return static_cast<double>(g[r * c + k]) * xh[r * c + k];
  });
  EnsureShape(dgamma, {c});
  EnsureShape(dbeta, {c});
  std::vector<float> scale(c), dbeta_mean(c), dgamma_mean(c);
  for (int64_t k = 0; k < c; ++k) {
    (*dbeta)[k] = static_cast<float>(sum_dy[k]);
    (*dgamma)[k] = static_cast<float>(sum_dy_xhat[k]);
    scale[k] = gamma[k] * inv_std_[k];
    dbeta_mean[k] = static_cast<float>(sum_dy[k] / m);
    dgamma_mean[k] = static_cast<float>(sum_dy_xhat[k] / m);
  }
  if (dx != &dy) EnsureShape(dx, dy.shape());
  float* out = dx->data();
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t k = 0; k < c; ++k) {
      const int64_t i = r * c + k;
      out[i] = BatchNormGrad(g[i], xh[i], scale[k], dbeta_mean[k], dgamma_mean[k]);
    }
  }
  return OkStatus();
}

Status BatchNorm::MovingAverageDeltas(const Tensor& moving_mean, const Tensor& moving_variance,
                                      Tensor* mean_delta, Tensor* variance_delta) {
  const int64_t c = config_.channels;
  if (mean_.size() != static_cast<size_t>(c)) {
    return FailedPrecondition("batch norm: moving-average deltas without a training forward");
  }
  if (moving_mean.shape() != Shape{c} || moving_variance.shape() != Shape{c}) {
    return InvalidArgument("batch norm: moving statistics " + ShapeString(moving_mean.shape()) +
                           " and " + ShapeString(moving_variance.shape()) + ", want [" +
                           std::to_string(c) + "]");
  }
  EnsureShape(mean_delta, {c});
  EnsureShape(variance_delta, {c});
  for (int64_t k = 0; k < c; ++k) {
    (*mean_delta)[k] = MovingAverageDelta(moving_mean[k], mean_[k], config_.momentum);
    (*variance_delta)[k] = MovingAverageDelta(moving_variance[k], variance_[k], config_.momentum);
  }
  return OkStatus();
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
