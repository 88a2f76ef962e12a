// The model every binary loads from --model, one way: its spec (a built-in
// network's name or a ModelSpec file), with the data flags applied
// (data/data_flags.h: --ngrams, --buckets, --dim, the vocabulary files from
// --data_dir), then the model made from it.
#ifndef PSTRAIN_NN_MODEL_FLAGS_H_
#define PSTRAIN_NN_MODEL_FLAGS_H_

#include <memory>
#include <string>

#include "core/status.h"
#include "nn/model.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// The spec of `name_or_path` as the data flags make it; its recipe's
// batch_size, where set, becomes --batch_size's default. LoadModelSpec's
// and ApplyDataFlags' errors.
StatusOr<proto::ModelSpec> LoadSpecFromFlags(const std::string& name_or_path);

struct LoadedModel {
  proto::ModelSpec spec;
  std::unique_ptr<Model> model;
};
// LoadSpecFromFlags, then CreateModel on it (a worker builds its towers
// from the spec instead).
StatusOr<LoadedModel> LoadModelFromFlags(const std::string& name_or_path);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_MODEL_FLAGS_H_
