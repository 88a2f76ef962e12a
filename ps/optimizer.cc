#include "ps/optimizer.h"

#include <cmath>
#include <optional>

#include "ps/update_rules.h"

namespace pstrain {
namespace {

using OptimizerOr = StatusOr<std::unique_ptr<Optimizer>>;

class GradientDescent : public Optimizer {
 public:
  explicit GradientDescent(LrSchedule s) : Optimizer(std::move(s)) {}
  std::vector<std::string> slot_names() const override { return {}; }
  void Apply(float* var, const std::vector<float*>&, const float* grad, int64_t n, float lr,
             int64_t) const override {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) GradientDescentUpdate(&var[i], grad[i], lr);
  }
};

class Momentum : public Optimizer {
 public:
  Momentum(LrSchedule s, float momentum, bool nesterov)
      : Optimizer(std::move(s)), momentum_(momentum), nesterov_(nesterov) {}
  std::vector<std::string> slot_names() const override { return {"Momentum"}; }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n, float lr,
             int64_t) const override {
    float* accum = slots[0];
    const float momentum = momentum_;
    // The rule's branch is taken here, once: GCC leaves a loop with a branch
    // in it scalar.
    if (nesterov_) {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i)
        MomentumUpdate(&var[i], &accum[i], grad[i], lr, momentum, true);
    } else {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        MomentumUpdate(&var[i], &accum[i], grad[i], lr, momentum, false);
      }
    }
  }

 private:
  const float momentum_;
  const bool nesterov_;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(LrSchedule s, float initial_accumulator_value)
      : Optimizer(std::move(s)), initial_accumulator_value_(initial_accumulator_value) {}
  std::vector<std::string> slot_names() const override { return {"accumulator"}; }
  float slot_initial_value(int) const override { return initial_accumulator_value_; }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n, float lr,
             int64_t) const override {
    float* accum = slots[0];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) AdagradUpdate(&var[i], &accum[i], grad[i], lr);
  }

 private:
  const float initial_accumulator_value_;
};

class Adadelta : public Optimizer {
 public:
  Adadelta(LrSchedule s, float rho, float epsilon)
      : Optimizer(std::move(s)), rho_(rho), epsilon_(epsilon) {}
  std::vector<std::string> slot_names() const override { return {"accum", "accum_update"}; }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n, float lr,
             int64_t) const override {
    float *accum = slots[0], *accum_update = slots[1];
    const float rho = rho_, epsilon = epsilon_;  // locals, or the loop stays scalar
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      AdadeltaUpdate(&var[i], &accum[i], &accum_update[i], grad[i], lr, rho, epsilon);
    }
  }

 private:
  const float rho_, epsilon_;
};

// t, the update's number among the variable's updates, drives the bias
// correction, as TF's beta1_power and beta2_power do.
class Adam : public Optimizer {
 public:
  Adam(LrSchedule s, float beta1, float beta2, float epsilon, bool lazy)
      : Optimizer(std::move(s)), beta1_(beta1), beta2_(beta2), epsilon_(epsilon), lazy_(lazy) {}
  std::vector<std::string> slot_names() const override { return {"m", "v"}; }
  bool sparse_updates_every_row() const override { return !lazy_; }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n, float lr,
             int64_t update_count) const override {
    const auto t = static_cast<double>(update_count);
    const float lr_t = AdamStepSize(lr, static_cast<float>(std::pow(double{beta1_}, t)),
                                    static_cast<float>(std::pow(double{beta2_}, t)));
    float *m = slots[0], *v = slots[1];
    const float beta1 = beta1_, beta2 = beta2_, epsilon = epsilon_;  // as in Adadelta
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      AdamUpdate(&var[i], &m[i], &v[i], grad[i], lr_t, beta1, beta2, epsilon);
    }
  }

 private:
  const float beta1_, beta2_, epsilon_;
  const bool lazy_;
};

// TF starts "rms" at 1 and the others at 0.
class RMSProp : public Optimizer {
 public:
  RMSProp(LrSchedule s, float decay, float momentum, float epsilon, bool centered)
      : Optimizer(std::move(s)),
        decay_(decay),
        momentum_(momentum),
        epsilon_(epsilon),
        centered_(centered) {}
  std::vector<std::string> slot_names() const override {
    if (centered_) return {"rms", "momentum", "mg"};
    return {"rms", "momentum"};
  }
  float slot_initial_value(int slot) const override { return slot == 0 ? 1.0f : 0.0f; }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n, float lr,
             int64_t) const override {
    float *ms = slots[0], *mom = slots[1];
    if (centered_) {
      float* mg = slots[2];
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        CenteredRMSPropUpdate(&var[i], &ms[i], &mom[i], &mg[i], grad[i], lr, decay_, momentum_,
                              epsilon_);
      }
    } else {
#pragma omp simd
      for (int64_t i = 0; i < n; ++i) {
        RMSPropUpdate(&var[i], &ms[i], &mom[i], grad[i], lr, decay_, momentum_, epsilon_);
      }
    }
  }

 private:
  const float decay_, momentum_, epsilon_;
  const bool centered_;
};

class Ftrl : public Optimizer {
 public:
  struct Params {
    float initial_accumulator_value, l1, l2, l2_shrinkage, learning_rate_power;
  };
  Ftrl(LrSchedule s, Params p) : Optimizer(std::move(s)), p_(p) {}
  std::vector<std::string> slot_names() const override { return {"accumulator", "linear"}; }
  float slot_initial_value(int slot) const override {
    return slot == 0 ? p_.initial_accumulator_value : 0.0f;
  }
  void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n, float lr,
             int64_t) const override {
    float *accum = slots[0], *linear = slots[1];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      FtrlUpdate(&var[i], &accum[i], &linear[i], grad[i], lr, p_.l1, p_.l2, p_.l2_shrinkage,
                 p_.learning_rate_power);
    }
  }

 private:
  const Params p_;
};

// OK when `ok`; otherwise InvalidArgument naming the optimizer and parameter.
Status Check(bool ok, const std::string& optimizer, const char* param, const char* range,
             float value) {
  if (ok) return OkStatus();
  return InvalidArgument("optimizer " + optimizer + ": " + param + " must be " + range + ", got " +
                         std::to_string(value));
}

bool NonNegative(float v) { return std::isfinite(v) && v >= 0; }
bool InUnitInterval(float v) { return v >= 0 && v <= 1; }  // false for NaN
bool Fraction(float v) { return v >= 0 && v < 1; }         // [0, 1)

OptimizerOr MakeGradientDescent(const proto::OptimizerConfig&, LrSchedule s) {
  return std::unique_ptr<Optimizer>(new GradientDescent(std::move(s)));
}

OptimizerOr MakeMomentum(const proto::OptimizerConfig& c, LrSchedule s) {
  PS_RETURN_IF_ERROR(
      Check(NonNegative(c.momentum()), "Momentum", "momentum", ">= 0", c.momentum()));
  return std::unique_ptr<Optimizer>(new Momentum(std::move(s), c.momentum(), c.use_nesterov()));
}

OptimizerOr MakeAdagrad(const proto::OptimizerConfig& c, LrSchedule s) {
  const float init = c.has_initial_accumulator_value() ? c.initial_accumulator_value() : 0.1f;
  PS_RETURN_IF_ERROR(
      Check(std::isfinite(init) && init > 0, "Adagrad", "initial_accumulator_value", "> 0", init));
  return std::unique_ptr<Optimizer>(new Adagrad(std::move(s), init));
}

OptimizerOr MakeAdadelta(const proto::OptimizerConfig& c, LrSchedule s) {
  const float rho = c.has_rho() ? c.rho() : 0.95f;
  const float epsilon = c.has_epsilon() ? c.epsilon() : 1e-8f;
  PS_RETURN_IF_ERROR(Check(InUnitInterval(rho), "Adadelta", "rho", "in [0, 1]", rho));
  PS_RETURN_IF_ERROR(Check(NonNegative(epsilon), "Adadelta", "epsilon", ">= 0", epsilon));
  return std::unique_ptr<Optimizer>(new Adadelta(std::move(s), rho, epsilon));
}

OptimizerOr MakeAdam(const proto::OptimizerConfig& c, LrSchedule s) {
  const float beta1 = c.has_beta1() ? c.beta1() : 0.9f;
  const float beta2 = c.has_beta2() ? c.beta2() : 0.999f;
  const float epsilon = c.has_epsilon() ? c.epsilon() : 1e-8f;
  PS_RETURN_IF_ERROR(Check(Fraction(beta1), "Adam", "beta1", "in [0, 1)", beta1));
  PS_RETURN_IF_ERROR(Check(Fraction(beta2), "Adam", "beta2", "in [0, 1)", beta2));
  PS_RETURN_IF_ERROR(Check(NonNegative(epsilon), "Adam", "epsilon", ">= 0", epsilon));
  return std::unique_ptr<Optimizer>(
      new Adam(std::move(s), beta1, beta2, epsilon, c.name() == "LazyAdam"));
}

OptimizerOr MakeRMSProp(const proto::OptimizerConfig& c, LrSchedule s) {
  const float decay = c.has_decay() ? c.decay() : 0.9f;
  const float epsilon = c.has_epsilon() ? c.epsilon() : 1e-10f;
  PS_RETURN_IF_ERROR(Check(InUnitInterval(decay), "RMSProp", "decay", "in [0, 1]", decay));
  PS_RETURN_IF_ERROR(Check(NonNegative(c.momentum()), "RMSProp", "momentum", ">= 0", c.momentum()));
  PS_RETURN_IF_ERROR(Check(NonNegative(epsilon), "RMSProp", "epsilon", ">= 0", epsilon));
  return std::unique_ptr<Optimizer>(
      new RMSProp(std::move(s), decay, c.momentum(), epsilon, c.centered()));
}

OptimizerOr MakeFtrl(const proto::OptimizerConfig& c, LrSchedule s) {
  Ftrl::Params p;
  p.initial_accumulator_value =
      c.has_initial_accumulator_value() ? c.initial_accumulator_value() : 0.1f;
  p.learning_rate_power = c.has_learning_rate_power() ? c.learning_rate_power() : -0.5f;
  p.l1 = c.l1_regularization_strength();
  p.l2 = c.l2_regularization_strength();
  p.l2_shrinkage = c.l2_shrinkage_regularization_strength();
  PS_RETURN_IF_ERROR(Check(NonNegative(p.initial_accumulator_value), "Ftrl",
                           "initial_accumulator_value", ">= 0", p.initial_accumulator_value));
  PS_RETURN_IF_ERROR(Check(std::isfinite(p.learning_rate_power) && p.learning_rate_power <= 0,
                           "Ftrl", "learning_rate_power", "<= 0", p.learning_rate_power));
  PS_RETURN_IF_ERROR(Check(NonNegative(p.l1), "Ftrl", "l1_regularization_strength", ">= 0", p.l1));
  PS_RETURN_IF_ERROR(Check(NonNegative(p.l2), "Ftrl", "l2_regularization_strength", ">= 0", p.l2));
  PS_RETURN_IF_ERROR(Check(NonNegative(p.l2_shrinkage), "Ftrl",
                           "l2_shrinkage_regularization_strength", ">= 0", p.l2_shrinkage));
  // FTRL divides by the rate, so it must stay positive at every step (TF's
  // ApplyFtrl requires lr > 0; an exponential decay never reaches 0).
  const proto::LrScheduleConfig& sc = c.lr_schedule();
  if (sc.kind() == proto::LrScheduleConfig::PIECEWISE_CONSTANT) {
    for (float v : sc.values()) {
      PS_RETURN_IF_ERROR(Check(v > 0, "Ftrl", "every lr_schedule value", "> 0", v));
    }
  } else {
    PS_RETURN_IF_ERROR(
        Check(c.learning_rate() > 0, "Ftrl", "learning_rate", "> 0", c.learning_rate()));
  }
  return std::unique_ptr<Optimizer>(new Ftrl(std::move(s), p));
}

struct Kind {
  const char* name;
  std::optional<float> default_learning_rate;  // TF's; none: required
  OptimizerOr (*make)(const proto::OptimizerConfig&, LrSchedule);
};

const Kind kKinds[] = {
    {"GradientDescent", std::nullopt, MakeGradientDescent},
    {"Momentum", std::nullopt, MakeMomentum},
    {"Adagrad", std::nullopt, MakeAdagrad},
    {"Adadelta", 0.001f, MakeAdadelta},
    {"Adam", 0.001f, MakeAdam},
    {"LazyAdam", 0.001f, MakeAdam},
    {"RMSProp", std::nullopt, MakeRMSProp},
    {"Ftrl", std::nullopt, MakeFtrl},
};

}  // namespace

StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(const proto::OptimizerConfig& c) {
  const Kind* kind = nullptr;
  std::string known;
  for (const Kind& k : kKinds) {
    if (c.name() == k.name) kind = &k;
    known += known.empty() ? k.name : std::string(", ") + k.name;
  }
  if (kind == nullptr) {
    return InvalidArgument("unknown optimizer '" + c.name() + "' (known: " + known + ")");
  }
  proto::OptimizerConfig resolved = c;
  if (!c.has_learning_rate()) {
    if (kind->default_learning_rate) {
      resolved.set_learning_rate(*kind->default_learning_rate);
    } else if (c.lr_schedule().kind() != proto::LrScheduleConfig::PIECEWISE_CONSTANT) {
      return InvalidArgument("optimizer " + c.name() + ": learning_rate is required");
    }
  }
  auto schedule = LrSchedule::Create(resolved.lr_schedule(), resolved.learning_rate());
  if (!schedule.ok()) return schedule.status().Annotate("optimizer " + c.name());
  return kind->make(resolved, std::move(schedule).value());
}

}  // namespace pstrain
