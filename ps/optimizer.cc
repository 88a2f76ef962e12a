#include "ps/optimizer.h"

#include <cmath>

#include "ps/update_rules.h"

namespace pstrain {
namespace {

class GradientDescent : public Optimizer {
 public:
  explicit GradientDescent(float lr) : lr_(lr) {}
  std::vector<std::string> slot_names() const override { return {}; }
  void Apply(float* var, const std::vector<float*>&, const float* grad,
             int64_t n) const override {
    for (int64_t i = 0; i < n; ++i) GradientDescentUpdate(&var[i], grad[i], lr_);
  }

 private:
  const float lr_;
};

class Momentum : public Optimizer {
 public:
  Momentum(float lr, float momentum, bool nesterov)
      : lr_(lr), momentum_(momentum), nesterov_(nesterov) {}
  std::vector<std::string> slot_names() const override { return {"Momentum"}; }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad,
             int64_t n) const override {
    float* accum = slots[0];
    for (int64_t i = 0; i < n; ++i) {
      MomentumUpdate(&var[i], &accum[i], grad[i], lr_, momentum_, nesterov_);
    }
  }

 private:
  const float lr_, momentum_;
  const bool nesterov_;
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(const proto::OptimizerConfig& c) {
  if (!std::isfinite(c.learning_rate()) || c.learning_rate() < 0) {
    return InvalidArgument("optimizer " + c.name() + ": learning rate must be >= 0, got " +
                           std::to_string(c.learning_rate()));
  }
  if (c.name() == "GradientDescent") {
    return std::unique_ptr<Optimizer>(new GradientDescent(c.learning_rate()));
  }
  if (c.name() == "Momentum") {
    if (!std::isfinite(c.momentum()) || c.momentum() < 0) {
      return InvalidArgument("optimizer Momentum: momentum must be >= 0");
    }
    return std::unique_ptr<Optimizer>(
        new Momentum(c.learning_rate(), c.momentum(), c.use_nesterov()));
  }
  return InvalidArgument("unknown optimizer '" + c.name() +
                         "' (known: GradientDescent, Momentum)");
}

}  // namespace pstrain
