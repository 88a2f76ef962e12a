#include "nn/model_flags.h"

#include <utility>

#include "data/data_flags.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {

StatusOr<proto::ModelSpec> LoadSpecFromFlags(const std::string& name_or_path) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, LoadModelSpec(name_or_path));
  PS_RETURN_IF_ERROR(data::ApplyDataFlags(&spec));
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
