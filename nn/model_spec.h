// Model specs: the built-in networks (nn/models/*.pbtxt, compiled into the
// binaries) and users' own, from protobuf text files.
#ifndef PSTRAIN_NN_MODEL_SPEC_H_
#define PSTRAIN_NN_MODEL_SPEC_H_

#include <string>
#include <vector>

#include "core/status.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// "cifar10", "mnist", "mnist_bn", "mnist_ids".
std::vector<std::string> BuiltinModelNames();

// A built-in network by name, "keras:PATH" a Keras model's JSON
// (nn/keras_model.h), or else a ModelSpec text file at that path. NotFound
// when it is none; InvalidArgument naming the file, line and column for
// text that does not parse (an unknown layer kind or field, a value of the
// wrong type), and naming the layer for a Keras model pstrain cannot build.
StatusOr<proto::ModelSpec> LoadModelSpec(const std::string& name_or_path);

// Whether the loss a model reports for a batch is the sum of its examples'
// losses (LossReduction SUM, and a wide_deep model's default, as TF 1.x's
// canned estimators) rather than their mean.
bool SumsLossOverBatch(const proto::ModelSpec& spec);

// Parses ModelSpec text; `source` names it in errors.
StatusOr<proto::ModelSpec> ParseModelSpec(const std::string& text, const std::string& source);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_MODEL_SPEC_H_
