// Optimizer: applies a gradient to a variable and its slots on the ps, with
// TensorFlow's update rules (ps/update_rules.h), slot names and defaults:
//
//   GradientDescent  no slots
//   Momentum         "Momentum"                 (momentum, use_nesterov)
//   Adagrad          "accumulator"              (initial_accumulator_value 0.1)
//   Adadelta         "accum", "accum_update"    (rho 0.95, epsilon 1e-8, lr 0.001)
//   Adam             "m", "v"                   (beta1 0.9, beta2 0.999,
//                                                epsilon 1e-8, lr 0.001)
//   LazyAdam         as Adam; on an embedding table only the rows with a
//                    gradient move (TF's LazyAdamOptimizer)
//   RMSProp          "rms", "momentum", and "mg" when centered
//                                               (decay 0.9, momentum 0,
//                                                epsilon 1e-10; rms starts at 1)
//   Ftrl             "accumulator", "linear"    (learning_rate_power -0.5,
//                                                initial_accumulator_value 0.1,
//                                                l1, l2, l2_shrinkage 0)
//
// A ps holds one Optimizer for all its variables, configured by the chief at
// Init. The learning rate is an argument of Apply, so the ps can follow
// lr_schedule() from global_step. Apply is stateless apart from the slots it
// is given, so concurrent calls on different variables are safe; the caller
// serializes calls on the same variable.
#ifndef PSTRAIN_PS_OPTIMIZER_H_
#define PSTRAIN_PS_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "proto/ps.pb.h"
#include "ps/lr_schedule.h"

namespace pstrain {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // Absent hyper-parameters take TF's defaults (above). InvalidArgument,
  // naming the parameter, for an unknown name, a missing learning rate, an
  // out-of-range hyper-parameter or a bad lr_schedule.
  static StatusOr<std::unique_ptr<Optimizer>> Create(const proto::OptimizerConfig& config);

  // Names of the slots each variable carries, in Apply's order.
  virtual std::vector<std::string> slot_names() const = 0;
  // The value every element of slot `slot` starts at.
  virtual float slot_initial_value(int /*slot*/) const { return 0; }

  // var[i] and slots[k][i] for i < n are updated from grad[i] at learning
  // rate `lr`. `update_count` >= 1 numbers this update among the variable's
  // updates (1 for the first); Adam's bias correction uses it as t.
  virtual void Apply(float* var, const std::vector<float*>& slots, const float* grad, int64_t n,
                     float lr, int64_t update_count) const = 0;

  // Embedding tables (ps/embedding/embedding_table.h) apply a sparse
  // gradient row by row with Apply, as TF's SparseApply* kernels do. True
  // for TF's AdamOptimizer on IndexedSlices, which also decays m and v of
  // every other row and moves it: the table then applies a zero gradient to
  // each row the push did not touch.
  virtual bool sparse_updates_every_row() const { return false; }

  // The learning rate as a function of global_step, from the config.
  const LrSchedule& lr_schedule() const { return lr_schedule_; }

 protected:
  explicit Optimizer(LrSchedule lr_schedule) : lr_schedule_(std::move(lr_schedule)) {}

 private:
  const LrSchedule lr_schedule_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_OPTIMIZER_H_
