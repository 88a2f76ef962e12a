#include "nn/model.h"

#include "nn/fasttext_model.h"
#include "nn/graph_model.h"
#include "nn/model_spec.h"
#include "nn/wide_deep_model.h"

namespace pstrain {
namespace nn {

StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& name_or_path) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, LoadModelSpec(name_or_path));
  return CreateModel(spec);
}

StatusOr<std::unique_ptr<Model>> CreateModel(const proto::ModelSpec& spec) {
  if (spec.has_wide_deep()) {
    PS_ASSIGN_OR_RETURN(std::unique_ptr<WideDeepModel> model, WideDeepModel::Create(spec));
    return std::unique_ptr<Model>(std::move(model));
  }
  if (spec.loss_reduction() == proto::EXAMPLE_BY_EXAMPLE) {
    PS_ASSIGN_OR_RETURN(std::unique_ptr<FastTextModel> model, FastTextModel::Create(spec));
    return std::unique_ptr<Model>(std::move(model));
  }
  PS_ASSIGN_OR_RETURN(std::unique_ptr<GraphModel> model, GraphModel::Create(spec));
  return std::unique_ptr<Model>(std::move(model));
}

Status CheckParam(const std::string& model, const VariableSpec& variable, const Tensor& param) {
  if (param.shape() == variable.shape) return OkStatus();
  return InvalidArgument(model + ": " + variable.name + " has shape " + ShapeString(param.shape()) +
                         ", want " + ShapeString(variable.shape));
}

Status CheckImages(const std::string& model, const Shape& example_shape, const Tensor& images) {
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

Status CheckInputKind(const Model& model, const std::string& name, const ModelInput& input) {
  if (!model.lookups().empty() && input.images != nullptr) {
    return InvalidArgument(name + " looks up ids (it starts with embedding layers), not images");
  }
  if (model.lookups().empty() && input.images == nullptr) {
    return InvalidArgument(name + " reads images, and the input has none");
  }
  return OkStatus();
}

}  // namespace nn
}  // namespace pstrain
