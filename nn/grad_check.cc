#include "nn/grad_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>

#include "core/testing/status_assertions.h"

namespace pstrain {
namespace nn {

Tensor RandomTensor(const Shape& shape, std::mt19937* rng, float lo, float hi) {
  Tensor t(shape);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = dist(*rng);
  return t;
}

Tensor DistinctTensor(const Shape& shape, std::mt19937* rng, float lo, float step) {
  Tensor t(shape);
  std::vector<int64_t> order(t.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), *rng);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = lo + step * static_cast<float>(order[i]);
  return t;
}

double Dot(const Tensor& y, const Tensor& r) {
  EXPECT_EQ(y.shape(), r.shape());
  double sum = 0;
  for (int64_t i = 0; i < y.size(); ++i) sum += static_cast<double>(y[i]) * r[i];
  return sum;
}

void ExpectGradientMatches(const char* what, Tensor* x, const Tensor& analytic,
                           const std::function<double()>& loss, const GradCheckOptions& options) {
  ASSERT_EQ(x->shape(), analytic.shape()) << what;
  std::vector<int64_t> coords = options.coords;
  if (coords.empty()) {
    coords.resize(x->size());
    std::iota(coords.begin(), coords.end(), 0);
  }
  int failures = 0;
  std::string report;
  for (int64_t i : coords) {
    const float saved = (*x)[i];
    (*x)[i] = static_cast<float>(saved + options.eps);
    const double plus = loss();
    (*x)[i] = static_cast<float>(saved - options.eps);
    const double minus = loss();
    (*x)[i] = saved;
    std::vector<double> estimates = {(plus - minus) / (2 * options.eps)};
    if (options.kink_tolerant) {
      const double center = loss();
      estimates.push_back((plus - center) / options.eps);
      estimates.push_back((center - minus) / options.eps);
    }
    bool matched = false;
    for (double numeric : estimates) {
      matched |=
          std::fabs(numeric - analytic[i]) <= options.atol + options.rtol * std::fabs(numeric);
    }
    // Report the first few mismatches only, so a broken kernel stays readable.
    if (!matched && ++failures <= 5) {
      std::ostringstream line;
      line << "\n  d/dx[" << i << "] analytic " << analytic[i] << " numeric " << estimates[0];
      report += line.str();
    }
  }
  if (failures > 0) {
    ADD_FAILURE() << what << ": " << failures << " of " << coords.size()
                  << " coordinates mismatched" << report;
  }
}

void ExpectCloseToScale(const char* what, const Tensor& got, const Tensor& want, double tol) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  double scale = 0;
  for (int64_t i = 0; i < want.size(); ++i) scale = std::max(scale, std::abs(double{want[i]}));
  for (int64_t i = 0; i < got.size(); ++i) {
    ASSERT_LE(std::abs(double{got[i]} - want[i]), tol * scale)
        << what << " at " << i << ": " << got[i] << " vs " << want[i] << ", largest " << scale;
  }
}

void ExpectAffineGradientsMatch(AffineKernel* kernel, Tensor* x, Tensor* w, Tensor* b,
                                std::mt19937* rng) {
  Tensor y;
  PS_ASSERT_OK(kernel->Forward(*x, *w, *b, &y));
  const Tensor r = RandomTensor(y.shape(), rng);
  auto loss = [&] {
    Tensor out;
    PS_EXPECT_OK(kernel->Forward(*x, *w, *b, &out));
    return Dot(out, r);
  };
  Tensor dx, dw, db;
  PS_ASSERT_OK(kernel->Backward(*x, *w, r, &dx, &dw, &db));
  GradCheckOptions options;
  options.eps = 1.0;
  ExpectGradientMatches("x", x, dx, loss, options);
  ExpectGradientMatches("w", w, dw, loss, options);
  ExpectGradientMatches("b", b, db, loss, options);
}

void ExpectModelGradientsMatch(const std::vector<VariableSpec>& variables,
                               std::vector<Tensor>* params, const std::vector<Tensor>& grads,
                               const std::function<double()>& loss, GradCheckOptions options,
                               std::mt19937* rng) {
  ASSERT_EQ(grads.size(), params->size());
  for (size_t v = 0; v < params->size(); ++v) {
    if (!variables[v].trainable) continue;
    const Tensor& g = grads[v];
    ASSERT_EQ(g.shape(), (*params)[v].shape()) << variables[v].name;
    std::vector<int64_t> order(g.size());
    std::iota(order.begin(), order.end(), 0);
    // The largest three, or all of a smaller variable (a logit's bias).
    const int64_t top = std::min<int64_t>(3, g.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](int64_t a, int64_t b) { return std::fabs(g[a]) > std::fabs(g[b]); });
    options.coords.assign(order.begin(), order.begin() + top);
    std::uniform_int_distribution<int64_t> pick(0, g.size() - 1);
    for (int i = 0; i < 3; ++i) options.coords.push_back(pick(*rng));
    EXPECT_GT(std::fabs(g[order[0]]), 10 * options.atol) << variables[v].name;
    ExpectGradientMatches(variables[v].name.c_str(), &(*params)[v], g, loss, options);
  }
}

}  // namespace nn
}  // namespace pstrain
