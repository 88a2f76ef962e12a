// Warm starts from TensorFlow checkpoints (chief/tf_bundle.h), as
// tf.estimator.WarmStartSettings gives them: the model's variables whose
// names match a regex take their values from the checkpoint, each under its
// own name or the TF name a map gives it; the others start as usual. Only
// a train dir without a checkpoint of its own is warm-started. A TF 2
// checkpoint (tf.train.Checkpoint of a Keras model) is read through its
// object graph: each variable under the name it was saved with, Keras's
// "dense/kernel" for a model read with --model=keras:FILE.json.
#ifndef PSTRAIN_CHIEF_WARM_START_H_
#define PSTRAIN_CHIEF_WARM_START_H_

#include <map>
#include <string>
#include <vector>

#include "chief/checkpoint.h"
#include "core/status.h"
#include "core/tensor.h"
#include "nn/model.h"

namespace pstrain {

struct WarmStartOptions {
  std::string prefix;       // the checkpoint (PREFIX.index, PREFIX.data-...)
  std::string vars = ".*";  // a regex the whole pstrain name must match
  std::string map;          // "tf_name=pstrain_name,..."
  // Also each matching trainable variable's optimizer slots (these, under
  // the names tf_name gives them) and, with moving_average, its
  // ExponentialMovingAverage.
  bool slots = false;
  std::vector<std::string> slot_names;
  TfNameFn tf_name;
  bool moving_average = false;
};

// The values of the matching variables (and of their slots and moving
// averages when asked), by pstrain name. InvalidArgument naming the
// variable (and the checkpoint) for one the checkpoint lacks or holds with
// another shape or dtype, likewise for a slot or moving average asked for,
// for a regex that does not parse or matches no variable, for a map entry
// that is not tf_name=pstrain_name or names no variable of the model; the
// checkpoint's read errors.
StatusOr<std::map<std::string, Tensor>> WarmStartValues(
    const std::vector<nn::VariableSpec>& variables, const WarmStartOptions& options);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_WARM_START_H_
