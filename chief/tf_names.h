// The names TensorFlow 1.x gives what a pstrain checkpoint holds, for
// checkpoints in TensorFlow's format: optimizer O's slots of a variable V
// are "V/O", "V/O_1", ... in the order TF's optimizer creates them
// (Adagrad's accumulator "V/Adagrad", Adam's m and v "V/Adam" and
// "V/Adam_1", Ftrl's "V/Ftrl" and "V/Ftrl_1"); variables, moving averages
// ("V/ExponentialMovingAverage") and Momentum's slot ("V/Momentum") already
// bear TF's names.
#ifndef PSTRAIN_CHIEF_TF_NAMES_H_
#define PSTRAIN_CHIEF_TF_NAMES_H_

#include <vector>

#include "chief/checkpoint.h"
#include "nn/model.h"
#include "proto/ps.pb.h"

namespace pstrain {

// The TF name of each tensor of a checkpoint of these variables trained by
// this optimizer (one it does not know: every name as it is).
TfNameFn TfCheckpointNames(const std::vector<nn::VariableSpec>& variables,
                           const proto::OptimizerConfig& optimizer);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_TF_NAMES_H_
