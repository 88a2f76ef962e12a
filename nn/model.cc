#include "nn/model.h"

#include "nn/graph_model.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {

StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& name_or_path) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, LoadModelSpec(name_or_path));
  return CreateModel(spec);
}

StatusOr<std::unique_ptr<Model>> CreateModel(const proto::ModelSpec& spec) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<GraphModel> model, GraphModel::Create(spec));
  return std::unique_ptr<Model>(std::move(model));
}

Status CheckModelInputs(const std::string& model, const std::vector<VariableSpec>& variables,
                        const Shape& example_shape, const std::vector<Tensor>& params,
                        const Tensor& images) {
  if (params.size() != variables.size()) {
    return InvalidArgument(model + ": " + std::to_string(params.size()) + " params, want " +
                           std::to_string(variables.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].shape() != variables[i].shape) {
      return InvalidArgument(model + ": " + variables[i].name + " has shape " +
                             ShapeString(params[i].shape()) + ", want " +
                             ShapeString(variables[i].shape));
    }
  }
  const Shape& s = images.shape();
  if (s.size() != example_shape.size() + 1 || s[0] == 0 ||
      Shape(s.begin() + 1, s.end()) != example_shape) {
    Shape want = {-1};
    want.insert(want.end(), example_shape.begin(), example_shape.end());
    return InvalidArgument(model + ": images " + ShapeString(s) + ", want " + ShapeString(want) +
                           " (-1: any batch size)");
  }
  return OkStatus();
}

}  // namespace nn
}  // namespace pstrain
