// StepHooks: how a training step meets the transfers around it, so a worker
// can overlap them with compute (the data-plane issue's item 3, as BytePS and
// Horovod order their traffic): the forward pass waits for each variable
// only when the layer that owns it is about to run, and the backward pass
// hands each gradient on as soon as it is final, while earlier layers are
// still being computed.
//
// Both are called on the thread that runs LossAndGradients, in order:
// ParamReady in model order, before the first read of the variable (its
// shape included); GradientReady in backward order (last layer first), each
// variable once, after which the model does not touch that gradient again in
// this step.
#ifndef PSTRAIN_NN_STEP_HOOKS_H_
#define PSTRAIN_NN_STEP_HOOKS_H_

#include <cstddef>

#include "core/status.h"

namespace pstrain {
namespace nn {

class StepHooks {
 public:
  virtual ~StepHooks() = default;
  // Blocks until params[v] holds this step's value. An error (the pull of
  // that variable failed) ends the step with it.
  virtual Status ParamReady(size_t v) = 0;
  // (*grads)[v] is this step's gradient (or delta) of variable v, weight
  // decay included. An error ends the step with it.
  virtual Status GradientReady(size_t v) = 0;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_STEP_HOOKS_H_
