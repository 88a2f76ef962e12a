#include "ps/optimizer_flags.h"

#include "ps/optimizer.h"

// Defaults are the mnist recipe of MODELS.md: Nesterov momentum 0.9.
DEFINE_string(optimizer, "Momentum", "GradientDescent or Momentum");
DEFINE_double(learning_rate, 0.01, "Learning rate");
DEFINE_double(momentum, 0.9, "Momentum (Momentum optimizer)");
DEFINE_bool(use_nesterov, true, "Nesterov momentum (Momentum optimizer)");

namespace pstrain {

StatusOr<proto::OptimizerConfig> OptimizerConfigFromFlags() {
  proto::OptimizerConfig c;
  c.set_name(FLAGS_optimizer);
  c.set_learning_rate(static_cast<float>(FLAGS_learning_rate));
  c.set_momentum(static_cast<float>(FLAGS_momentum));
  c.set_use_nesterov(FLAGS_use_nesterov);
  PS_RETURN_IF_ERROR(Optimizer::Create(c).status());
  return c;
}

StatusOr<int> OptimizerSlotCount(const proto::OptimizerConfig& config) {
  PS_ASSIGN_OR_RETURN(auto opt, Optimizer::Create(config));
  return static_cast<int>(opt->slot_names().size());
}

}  // namespace pstrain
