// LrSchedule: the learning rate as a function of global_step, with
// TensorFlow's semantics (proto::LrScheduleConfig documents each kind).
//
// Immutable after Create; At may be called from any thread.
#ifndef PSTRAIN_PS_LR_SCHEDULE_H_
#define PSTRAIN_PS_LR_SCHEDULE_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "proto/ps.pb.h"

namespace pstrain {

class LrSchedule {
 public:
  // `learning_rate` is the base rate of CONSTANT and EXPONENTIAL_DECAY
  // (PIECEWISE_CONSTANT ignores it). InvalidArgument, naming the field, for a
  // negative or non-finite rate, decay_steps <= 0, decay_rate <= 0, boundaries
  // not strictly increasing, or values.size() != boundaries.size() + 1.
  static StatusOr<LrSchedule> Create(const proto::LrScheduleConfig& config, float learning_rate);

  // The learning rate at `global_step` (>= 0).
  float At(int64_t global_step) const;

 private:
  LrSchedule(const proto::LrScheduleConfig& config, float learning_rate);

  proto::LrScheduleConfig::Kind kind_;
  float learning_rate_;
  int64_t decay_steps_;
  double decay_rate_;
  bool staircase_;
  std::vector<int64_t> boundaries_;
  std::vector<float> values_;
  double end_learning_rate_;  // POLYNOMIAL_DECAY
  double power_;              // POLYNOMIAL_DECAY
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_LR_SCHEDULE_H_
