#include "ps/optimizer_flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "ps/optimizer.h"

// The optimizer's hyper-parameters, named as TF's arguments. One that is not
// given on the command line takes the model's recipe (proto/model.proto's
// TrainingRecipe: --optimizer, --learning_rate, --momentum, --use_nesterov,
// --lr_schedule and its flags), or else is left out of the config, so the
// optimizer takes TF's default for it (ps/optimizer.h); the defaults printed
// here are the mnist recipe's and TF's.
DEFINE_string(
    optimizer, "Momentum",
    "GradientDescent, Momentum, Adagrad, Adadelta, Adam, LazyAdam, RMSProp or Ftrl (default: "
    "the model's recipe)");
DEFINE_double(learning_rate, 0.01,
              "Learning rate (the base rate of --lr_schedule); when not given: the model's "
              "recipe for its optimizer (mnist: 0.01, with --sync_replicas 0.03; cifar10: 0.1), "
              "else 0.001 for Adam and Adadelta, required by the others");
DEFINE_double(momentum, 0.9, "Momentum (Momentum: 0.9 when not given; RMSProp: 0)");
DEFINE_bool(use_nesterov, true, "Nesterov momentum (Momentum)");
DEFINE_double(beta1, 0.9, "Adam: decay of the first-moment estimate");
DEFINE_double(beta2, 0.999, "Adam: decay of the second-moment estimate");
DEFINE_double(epsilon, 1e-8, "Adam, Adadelta: 1e-8; RMSProp: 1e-10");
DEFINE_double(rho, 0.95, "Adadelta: decay rate");
DEFINE_double(decay, 0.9, "RMSProp: decay of the squared-gradient average");
DEFINE_bool(centered, false, "RMSProp: normalize by the estimated variance of the gradient");
DEFINE_double(initial_accumulator_value, 0.1, "Adagrad, Ftrl: starting accumulator value");
DEFINE_double(l1_regularization_strength, 0, "Ftrl: L1 regularization");
DEFINE_double(l2_regularization_strength, 0, "Ftrl: L2 regularization");
DEFINE_double(l2_shrinkage_regularization_strength, 0, "Ftrl: L2 shrinkage regularization");
DEFINE_double(learning_rate_power, -0.5, "Ftrl: power of the per-coordinate rate (<= 0)");
DEFINE_string(lr_schedule, "constant",
              "Learning rate from global_step: constant, exponential_decay, "
              "piecewise_constant or polynomial_decay");
DEFINE_int64(decay_steps, 0,
             "exponential_decay: steps per factor of --decay_rate; polynomial_decay: steps to "
             "reach --end_learning_rate (> 0)");
DEFINE_double(end_learning_rate, 0, "polynomial_decay: the rate after --decay_steps");
DEFINE_double(decay_power, 1, "polynomial_decay: the power (1: linear, as fastText decays)");
DEFINE_double(decay_rate, 0, "exponential_decay: factor per --decay_steps (> 0)");
DEFINE_bool(staircase, false, "exponential_decay: decay in whole steps of --decay_steps");
DEFINE_string(lr_boundaries, "", "piecewise_constant: global steps, e.g. 1000,2000");
DEFINE_string(lr_values, "",
              "piecewise_constant: one more rate than boundaries, e.g. 0.1,0.01,0.001");

namespace pstrain {
namespace {

bool Given(const char* flag) { return !gflags::GetCommandLineFlagInfoOrDie(flag).is_default; }

// "1,2,3" (or "") into numbers; InvalidArgument naming the flag otherwise.
template <typename T>
StatusOr<std::vector<T>> ParseList(const char* flag, const std::string& text) {
  std::vector<T> out;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    char* parsed_end = nullptr;
    errno = 0;
    T value;
    if constexpr (std::is_integral_v<T>) {
      value = std::strtoll(item.c_str(), &parsed_end, 10);
    } else {
      value = std::strtof(item.c_str(), &parsed_end);
    }
    if (item.empty() || errno != 0 || *parsed_end != '\0') {
      return InvalidArgument(std::string("--") + flag + ": bad number '" + item + "' in '" + text +
                             "'");
    }
    out.push_back(value);
    begin = end + 1;
  }
  return out;
}

StatusOr<proto::LrScheduleConfig> LrScheduleFromFlags() {
  proto::LrScheduleConfig s;
  if (FLAGS_lr_schedule == "constant") {
    s.set_kind(proto::LrScheduleConfig::CONSTANT);
  } else if (FLAGS_lr_schedule == "exponential_decay") {
    s.set_kind(proto::LrScheduleConfig::EXPONENTIAL_DECAY);
    s.set_decay_steps(FLAGS_decay_steps);
    s.set_decay_rate(static_cast<float>(FLAGS_decay_rate));
    s.set_staircase(FLAGS_staircase);
  } else if (FLAGS_lr_schedule == "polynomial_decay") {
    s.set_kind(proto::LrScheduleConfig::POLYNOMIAL_DECAY);
    s.set_decay_steps(FLAGS_decay_steps);
    s.set_end_learning_rate(static_cast<float>(FLAGS_end_learning_rate));
    s.set_power(static_cast<float>(FLAGS_decay_power));
  } else if (FLAGS_lr_schedule == "piecewise_constant") {
    s.set_kind(proto::LrScheduleConfig::PIECEWISE_CONSTANT);
    PS_ASSIGN_OR_RETURN(auto boundaries, ParseList<int64_t>("lr_boundaries", FLAGS_lr_boundaries));
    PS_ASSIGN_OR_RETURN(auto values, ParseList<float>("lr_values", FLAGS_lr_values));
    s.mutable_boundaries()->Add(boundaries.begin(), boundaries.end());
    s.mutable_values()->Add(values.begin(), values.end());
  } else {
    return InvalidArgument("--lr_schedule: unknown schedule '" + FLAGS_lr_schedule +
                           "' (known: constant, exponential_decay, piecewise_constant, "
                           "polynomial_decay)");
  }
  return s;
}

// OptimizerConfigFromFlags before its check.
StatusOr<proto::OptimizerConfig> UncheckedConfigFromFlags(const proto::TrainingRecipe& recipe,
                                                          bool sync) {
  proto::OptimizerConfig c;
  const std::string name =
      Given("optimizer") || recipe.optimizer().empty() ? FLAGS_optimizer : recipe.optimizer();
  c.set_name(name);
  // The recipe's values are for the recipe's optimizer.
  const bool recipe_optimizer = !recipe.optimizer().empty() && name == recipe.optimizer();
  if (Given("learning_rate")) {
    c.set_learning_rate(static_cast<float>(FLAGS_learning_rate));
  } else if (recipe_optimizer && recipe.learning_rate() > 0) {
    c.set_learning_rate(sync && recipe.sync_learning_rate() > 0 ? recipe.sync_learning_rate()
                                                                : recipe.learning_rate());
  } else if (name == "GradientDescent" || name == "Momentum") {
    c.set_learning_rate(static_cast<float>(FLAGS_learning_rate));
  }
  if (Given("momentum")) {
    c.set_momentum(static_cast<float>(FLAGS_momentum));
  } else if (recipe_optimizer && recipe.momentum() > 0) {
    c.set_momentum(recipe.momentum());
  } else if (name == "Momentum") {
    c.set_momentum(static_cast<float>(FLAGS_momentum));
  }
  c.set_use_nesterov(Given("use_nesterov") || !recipe_optimizer || name != "Momentum"
                         ? FLAGS_use_nesterov
                         : recipe.use_nesterov());
  if (Given("beta1")) c.set_beta1(static_cast<float>(FLAGS_beta1));
  if (Given("beta2")) c.set_beta2(static_cast<float>(FLAGS_beta2));
  if (Given("epsilon")) c.set_epsilon(static_cast<float>(FLAGS_epsilon));
  if (Given("rho")) c.set_rho(static_cast<float>(FLAGS_rho));
  if (Given("decay")) c.set_decay(static_cast<float>(FLAGS_decay));
  c.set_centered(FLAGS_centered);
  if (Given("initial_accumulator_value")) {
    c.set_initial_accumulator_value(static_cast<float>(FLAGS_initial_accumulator_value));
  }
  if (Given("learning_rate_power")) {
    c.set_learning_rate_power(static_cast<float>(FLAGS_learning_rate_power));
  }
  c.set_l1_regularization_strength(static_cast<float>(FLAGS_l1_regularization_strength));
  c.set_l2_regularization_strength(static_cast<float>(FLAGS_l2_regularization_strength));
  c.set_l2_shrinkage_regularization_strength(
      static_cast<float>(FLAGS_l2_shrinkage_regularization_strength));
  const bool schedule_given = Given("lr_schedule") || Given("decay_steps") || Given("decay_rate") ||
                              Given("end_learning_rate") || Given("decay_power") ||
                              Given("staircase") || Given("lr_boundaries") || Given("lr_values");
  if (schedule_given || !recipe.has_lr_schedule()) {
    PS_ASSIGN_OR_RETURN(*c.mutable_lr_schedule(), LrScheduleFromFlags());
  } else {
    *c.mutable_lr_schedule() = recipe.lr_schedule();
  }
  return c;
}

}  // namespace

StatusOr<proto::OptimizerConfig> OptimizerConfigFromFlags(const proto::TrainingRecipe& recipe,
                                                          bool sync) {
  PS_ASSIGN_OR_RETURN(proto::OptimizerConfig c, UncheckedConfigFromFlags(recipe, sync));
  PS_RETURN_IF_ERROR(Optimizer::Create(c).status());
  return c;
}

StatusOr<proto::OptimizerConfig> ExampleUpdateConfigFromFlags(const proto::ModelSpec& spec,
                                                              int64_t steps_of_run) {
  PS_ASSIGN_OR_RETURN(proto::OptimizerConfig c, UncheckedConfigFromFlags(spec.recipe(), false));
  if (c.name() != "GradientDescent") {
    return InvalidArgument("--optimizer=" + c.name() + ": model " + spec.name() +
                           " updates example by example, as fastText does: GradientDescent only");
  }
  proto::LrScheduleConfig* schedule = c.mutable_lr_schedule();
  if (schedule->kind() == proto::LrScheduleConfig::POLYNOMIAL_DECAY &&
      schedule->decay_steps() == 0) {
    if (steps_of_run <= 0) {
      return InvalidArgument("model " + spec.name() +
                             "'s rate decays over the run, whose steps --epochs=0 leaves "
                             "unknown: give --decay_steps");
    }
    schedule->set_decay_steps(steps_of_run);
  }
  PS_RETURN_IF_ERROR(Optimizer::Create(c).status());
  return c;
}

StatusOr<proto::OptimizerConfig> PsOptimizerFromFlags(const proto::ModelSpec& spec, bool sync) {
  if (spec.loss_reduction() != proto::EXAMPLE_BY_EXAMPLE) {
    return OptimizerConfigFromFlags(spec.recipe(), sync);
  }
  if (sync) {
    return InvalidArgument("--sync_replicas: model " + spec.name() +
                           " updates example by example, as fastText does, and its workers' "
                           "updates add up where sync replicas would average them: train it "
                           "asynchronously");
  }
  // The workers' config, checked here as well (its steps are theirs to know).
  PS_RETURN_IF_ERROR(ExampleUpdateConfigFromFlags(spec, /*steps_of_run=*/1).status());
  proto::OptimizerConfig adds;
  adds.set_name("GradientDescent");
  adds.set_learning_rate(1.0f);
  return adds;
}

StatusOr<int> OptimizerSlotCount(const proto::OptimizerConfig& config) {
  PS_ASSIGN_OR_RETURN(auto opt, Optimizer::Create(config));
  return static_cast<int>(opt->slot_names().size());
}

}  // namespace pstrain
