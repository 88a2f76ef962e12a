// Test helpers: random tensors and a central-difference gradient check.
#ifndef PSTRAIN_NN_GRAD_CHECK_H_
#define PSTRAIN_NN_GRAD_CHECK_H_

#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "core/tensor.h"
#include "nn/kernels.h"
#include "nn/model.h"

namespace pstrain {
namespace nn {

// A tensor of uniform values in [lo, hi).
Tensor RandomTensor(const Shape& shape, std::mt19937* rng, float lo = -1.0f, float hi = 1.0f);

// A tensor whose values are a shuffle of lo, lo + step, ..., so every pair
// differs by at least step: a max pool's argmax then survives a perturbation
// smaller than step / 2.
Tensor DistinctTensor(const Shape& shape, std::mt19937* rng, float lo, float step);

// sum(y * r) in double: a scalar loss whose gradient with respect to y is r.
double Dot(const Tensor& y, const Tensor& r);

struct GradCheckOptions {
  double eps = 1e-2;   // central-difference step
  double atol = 2e-4;  // pass when |num - analytic| <= atol + rtol * |num|
  double rtol = 1e-3;
  std::vector<int64_t> coords;  // coordinates to check; empty means all
  // Also accept a coordinate when the forward or the backward one-sided
  // difference matches. For whole networks: a step that moves some ReLU or
  // max pool across its kink spoils the central difference, but a kink on one
  // side leaves the other side's difference exact, while a wrong gradient
  // matches none of the three.
  bool kink_tolerant = false;
};

// For each checked coordinate i of *x, compares analytic[i] with
// (loss(x + eps e_i) - loss(x - eps e_i)) / (2 eps), adding a gtest failure
// (non-fatal, naming i) on mismatch. loss() reads *x; x is restored.
void ExpectGradientMatches(const char* what, Tensor* x, const Tensor& analytic,
                           const std::function<double()>& loss, const GradCheckOptions& options);

// |got - want| <= tol * max |want| at every element, else a gtest failure
// naming the first element that is not: for kernels that sum in another
// order than their reference, where a wrong index is off by O(1).
void ExpectCloseToScale(const char* what, const Tensor& got, const Tensor& want, double tol);

// An AffineKernel's dx, dw and db for x, w and b against numerical gradients
// of sum(y * r), r drawn from rng. The loss is linear in each operand, so a
// central difference is exact for any step, and a step of 1 keeps the
// forward pass's rounding (divided by twice the step) out of the comparison.
void ExpectAffineGradientsMatch(AffineKernel* kernel, Tensor* x, Tensor* w, Tensor* b,
                                std::mt19937* rng);

// A whole model's gradients: for each trainable variable, the 3 coordinates
// with the largest gradients (all of a smaller variable; the largest must
// exceed 10 * atol, so the check is not vacuous) and 3 drawn from rng, with
// options.coords set per variable.
void ExpectModelGradientsMatch(const std::vector<VariableSpec>& variables,
                               std::vector<Tensor>* params, const std::vector<Tensor>& grads,
                               const std::function<double()>& loss, GradCheckOptions options,
                               std::mt19937* rng);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_GRAD_CHECK_H_
