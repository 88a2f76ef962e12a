// Optimizer: applies a gradient to a variable and its slots on the ps.
//
// A ps holds one Optimizer for all its variables, configured by the chief at
// Init. Apply is stateless apart from the slots it is given, so concurrent
// calls on different variables are safe; the caller serializes calls on the
// same variable.
#ifndef PSTRAIN_PS_OPTIMIZER_H_
#define PSTRAIN_PS_OPTIMIZER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "proto/ps.pb.h"

namespace pstrain {

class Optimizer {
 public:
  virtual ~Optimizer() = default;

  // InvalidArgument for an unknown name or an out-of-range hyper-parameter.
  static StatusOr<std::unique_ptr<Optimizer>> Create(const proto::OptimizerConfig& config);

  // Names of the slots each variable carries ("momentum"), in Apply's order.
  virtual std::vector<std::string> slot_names() const = 0;

  // var[i] and slots[k][i] for i < n are updated from grad[i].
  virtual void Apply(float* var, const std::vector<float*>& slots, const float* grad,
                     int64_t n) const = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_OPTIMIZER_H_
