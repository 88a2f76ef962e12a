// Flags that choose the optimizer the ps tasks apply. The chief sends the
// resulting config at Init; workers need it too, because the optimizer's slot
// count weighs in placement (and so in the placement fingerprint).
#ifndef PSTRAIN_PS_OPTIMIZER_FLAGS_H_
#define PSTRAIN_PS_OPTIMIZER_FLAGS_H_

#include <gflags/gflags.h>

#include "core/status.h"
#include "proto/model.pb.h"
#include "proto/ps.pb.h"

DECLARE_string(optimizer);
DECLARE_double(learning_rate);
DECLARE_double(momentum);
DECLARE_bool(use_nesterov);

namespace pstrain {

// The config from --optimizer, its hyper-parameter flags (named as TF's
// arguments) and --lr_schedule with its flags. A flag that is not given takes
// the model's recipe (its sync_learning_rate when `sync`), else TF's default
// (ps/optimizer_flags.cc says which). InvalidArgument naming the parameter
// for an unknown optimizer or schedule, a bad hyper-parameter or a malformed
// list.
StatusOr<proto::OptimizerConfig> OptimizerConfigFromFlags(
    const proto::TrainingRecipe& recipe = proto::TrainingRecipe(), bool sync = false);
// What the ps tasks train `spec` with: OptimizerConfigFromFlags, or, for a
// model of example-by-example updates (nn/fasttext_model.h), whose workers
// make the updates at that config's rate, GradientDescent at a constant 1
// (the ps adds the updates). InvalidArgument for such a model with another
// optimizer than GradientDescent, or under sync replicas (which would
// average the updates).
StatusOr<proto::OptimizerConfig> PsOptimizerFromFlags(const proto::ModelSpec& spec, bool sync);
// What the workers of such a model make their updates with: the flags'
// (or the recipe's) GradientDescent rate and schedule, a polynomial decay
// that names no decay_steps decaying over `steps_of_run`, the run's global
// steps (fastText's rate falls to 0 over its run). InvalidArgument for
// another optimizer, for such a decay with no steps known (steps_of_run <=
// 0), and the config's own errors.
StatusOr<proto::OptimizerConfig> ExampleUpdateConfigFromFlags(const proto::ModelSpec& spec,
                                                              int64_t steps_of_run);
// Number of slot tensors the configured optimizer keeps per variable.
StatusOr<int> OptimizerSlotCount(const proto::OptimizerConfig& config);

}  // namespace pstrain

#endif  // PSTRAIN_PS_OPTIMIZER_FLAGS_H_
