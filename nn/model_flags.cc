#include "nn/model_flags.h"

#include <string>
#include <utility>

#include <gflags/gflags.h>

#include "data/data_flags.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {

StatusOr<proto::ModelSpec> LoadSpecFromFlags(const std::string& name_or_path) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, LoadModelSpec(name_or_path));
  PS_RETURN_IF_ERROR(data::ApplyDataFlags(&spec));
  const int batch_size = spec.recipe().batch_size();
  if (batch_size < 0) {
    return InvalidArgument("model " + spec.name() + ": recipe batch_size must be >= 0, got " +
                           std::to_string(batch_size));
  }
  // The recipe's batch is --batch_size's default: the flag, given, wins. A
  // binary without the flag (pstrain_model_info) has nothing to change.
  if (batch_size > 0) {
    gflags::SetCommandLineOptionWithMode("batch_size", std::to_string(batch_size).c_str(),
                                         gflags::SET_FLAGS_DEFAULT);
  }
  return spec;
}

StatusOr<LoadedModel> LoadModelFromFlags(const std::string& name_or_path) {
  LoadedModel loaded;
  PS_ASSIGN_OR_RETURN(loaded.spec, LoadSpecFromFlags(name_or_path));
  PS_ASSIGN_OR_RETURN(loaded.model, CreateModel(loaded.spec));
  return loaded;
}

}  // namespace nn
}  // namespace pstrain
