// MovingAverages: the ExponentialMovingAverage shadows of one ps task's
// trainable variables, as tf.train.ExponentialMovingAverage keeps them. A
// shadow starts at its variable's value (or at a restored shadow) and after
// each application to the variable moves toward it:
//   shadow -= (1 - d) * (shadow - value),  d = min(decay, (1 + n) / (10 + n)),
// n the global step that application produced (ps/update_rules.h).
//
// Thread contract: the set of shadows is fixed once made (Add, before it is
// shared). Each shadow has its own lock: an update takes it while holding
// its variable's lock (the order: the variable's, then the shadow's); a
// checkpoint's read takes it alone.
#ifndef PSTRAIN_PS_MOVING_AVERAGES_H_
#define PSTRAIN_PS_MOVING_AVERAGES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {

class MovingAverages {
 public:
  // A shadow is named "<variable>/" + kSuffix, in checkpoints as in TF.
  static constexpr const char* kSuffix = "ExponentialMovingAverage";

  // decay > 0.
  explicit MovingAverages(float decay) : decay_(decay) {}

  struct Shadow {
    Mutex mu;
    Tensor value ABSL_GUARDED_BY(mu);
  };
  // Adds the shadow of variable `name`: `state`'s saved shadow of it when
  // it holds one (taken out of `state`), else a copy of `value`.
  // InvalidArgument for a saved shadow of another shape.
  StatusOr<Shadow*> Add(const std::string& name, const Tensor& value,
                        std::map<std::string, Tensor>* state);

  // d for the application that produced global step n.
  float DecayAt(int64_t n) const;
  // Moves shadow[i] toward value[i], i in [0, n), at decay d.
  static void Update(float* shadow, const float* value, int64_t n, float d);

 private:
  const float decay_;
  std::map<std::string, std::unique_ptr<Shadow>> shadows_;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_MOVING_AVERAGES_H_
