#include "chief/evaluation.h"

#include <algorithm>

#include "data/input_pipeline.h"
#include "ps/variable_store.h"

namespace pstrain {

StatusOr<std::vector<Tensor>> SelectEvalParams(const nn::Model& model,
                                               const std::map<std::string, Tensor>& tensors,
                                               bool use_moving_averages, const std::string& source,
                                               bool* used_averages) {
  const auto shadow = [](const nn::VariableSpec& v) {
    return v.name + "/" + VariableStore::kEmaSuffix;
  };
  bool averaged = use_moving_averages;
  for (const nn::VariableSpec& v : model.variables()) {
    averaged &= !v.trainable || tensors.count(shadow(v)) > 0;
  }
  std::vector<Tensor> params;
  for (const nn::VariableSpec& v : model.variables()) {
    const std::string name = averaged && v.trainable ? shadow(v) : v.name;
    auto it = tensors.find(name);
    if (it == tensors.end()) return InvalidArgument(source + " has no tensor " + name);
    if (it->second.shape() != v.shape) {
      return InvalidArgument(source + ": tensor " + name + " has shape " +
                             ShapeString(it->second.shape()) + ", the model wants " +
                             ShapeString(v.shape));
    }
    params.push_back(it->second);
  }
  if (used_averages != nullptr) *used_averages = averaged;
  return params;
}

ImageInput ImageInputOf(const proto::ModelSpec& spec) {
  ImageInput input;
  input.preprocessing = spec.input().preprocessing();
  if (spec.input_shape_size() == 3) {
    input.height = static_cast<int>(spec.input_shape(0));
    input.width = static_cast<int>(spec.input_shape(1));
  }
  return input;
}

StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, const ImageInput& input,
                                          int batch_size) {
  EvalResult result;
  Tensor images;
  for (int64_t begin = 0; begin < ds.count; begin += batch_size) {
    const int64_t n = std::min<int64_t>(batch_size, ds.count - begin);
    PS_RETURN_IF_ERROR(data::PrepareEvalImages(ds, begin, n, input.preprocessing, input.height,
                                               input.width, &images));
    PS_ASSIGN_OR_RETURN(Tensor logits, model->Logits(params, images));
    const int64_t classes = logits.dim(1);
    for (int64_t i = 0; i < n; ++i) {
      const float* row = logits.data() + i * classes;
      const int64_t predicted = std::max_element(row, row + classes) - row;
      if (predicted == ds.labels[begin + i]) ++result.correct;
    }
    result.examples += n;
  }
  return result;
}

}  // namespace pstrain
