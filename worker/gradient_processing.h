// What a worker does to its gradients between backward and push, in
// TensorFlow's order: L2 weight decay (loss += wd * sum(w^2) / 2, so the
// gradient gains wd * w), per-variable gradient multipliers, a check that
// every gradient is finite, then clipping by value, by norm (per variable)
// and by global norm.
//
// A non-trainable variable's tensor is not a gradient but an assign_sub delta
// (nn/model.h): only the finiteness check applies to it; weight decay,
// multipliers and clipping (the global norm included) leave it out.
#ifndef PSTRAIN_WORKER_GRADIENT_PROCESSING_H_
#define PSTRAIN_WORKER_GRADIENT_PROCESSING_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"

namespace pstrain {

struct GradientOptions {
  std::map<std::string, float> weight_decay;  // variable -> wd
  std::map<std::string, float> multipliers;   // variable -> factor
  float clip_value = 0;                       // > 0: clip each element to [-v, v]
  float clip_norm = 0;                        // > 0: scale each gradient to L2 norm <= this
  float clip_global_norm = 0;                 // > 0: scale all gradients to global norm <= this
};

// "local3/weights=0.004,local4/weights=0.004" -> map. InvalidArgument naming
// the flag for a malformed entry.
StatusOr<std::map<std::string, float>> ParseVariableFloats(const std::string& flag,
                                                           const std::string& text);

// InvalidArgument when a weight decay or multiplier names a variable that
// `names` lacks, or one that is not trainable.
Status CheckGradientOptions(const GradientOptions& options, const std::vector<std::string>& names,
                            const std::vector<bool>& trainable);

// What ProcessGradients does to one variable's gradient, all but clipping by
// global norm (which needs every gradient): weight decay (*loss gains its
// term), multiplier, the finiteness check, clipping by value and by norm.
// The options must have passed CheckGradientOptions.
Status ProcessGradient(const GradientOptions& options, const std::string& name, bool trainable,
                       const Tensor& param, int64_t step, Tensor* grad, float* loss);

// Scales the trainable variables' gradients to a global L2 norm of at most
// options.clip_global_norm (nothing when it is 0).
void ClipByGlobalNorm(const GradientOptions& options, const std::vector<bool>& trainable,
                      std::vector<Tensor>* grads);

// `names`, `trainable`, `params` and `grads` are in model order. A name in
// the weight decay or multipliers that the model lacks, or that is not
// trainable, is InvalidArgument. A NaN or Inf gradient or delta is
// InvalidArgument naming the step and the variable (nothing may be pushed).
// *loss gains the weight decay terms.
Status ProcessGradients(const GradientOptions& options, const std::vector<std::string>& names,
                        const std::vector<bool>& trainable, const std::vector<Tensor>& params,
                        int64_t step, std::vector<Tensor>* grads, float* loss);

}  // namespace pstrain

#endif  // PSTRAIN_WORKER_GRADIENT_PROCESSING_H_
