#include "chief/evaluation.h"

#include <algorithm>

#include "ps/variable_store.h"

namespace pstrain {

StatusOr<std::vector<Tensor>> SelectEvalParams(const nn::Model& model,
                                               const std::map<std::string, Tensor>& tensors,
                                               bool use_moving_averages,
                                               const std::string& source, bool* used_averages) {
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

StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, int batch_size) {
  EvalResult result;
  Tensor images;
  for (int64_t begin = 0; begin < ds.count; begin += batch_size) {
    const int64_t n = std::min<int64_t>(batch_size, ds.count - begin);
    data::NormalizeImages(ds, begin, n, &images);
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
