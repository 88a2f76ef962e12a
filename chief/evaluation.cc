#include "chief/evaluation.h"

#include <algorithm>

#include "data/input_pipeline.h"
#include "data/pixel_ids.h"
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

namespace {

// A model of ids' logits on images [begin, begin + n) of `ds`.
StatusOr<Tensor> LogitsOfIds(nn::Model* model, const std::vector<Tensor>& params,
                             const data::ImageDataset& ds, int64_t begin, int64_t n,
                             const RowPull& pull_rows) {
  if (pull_rows == nullptr) {
    return InvalidArgument("evaluating a model of ids needs its rows from the ps tasks");
  }
  std::map<std::string, RaggedIds> features;
  PS_RETURN_IF_ERROR(data::PrepareEvalPixelIds(ds, begin, n, &features));
  const std::vector<nn::EmbeddingLookup>& lookups = model->lookups();
  std::vector<PsFleet::TableStep> tables(lookups.size());
  nn::SparseInput input;
  for (size_t l = 0; l < lookups.size(); ++l) {
    auto it = features.find(lookups[l].feature);
    if (it == features.end()) {
      return InvalidArgument("the evaluation input has no sparse feature " + lookups[l].feature);
    }
    tables[l].table = lookups[l].table.name();
    tables[l].dim = lookups[l].table.dim();
    tables[l].ids =
        Unique(it->second.values.data(), static_cast<int64_t>(it->second.values.size()));
  }
  PS_RETURN_IF_ERROR(pull_rows(&tables));
  for (size_t l = 0; l < lookups.size(); ++l) {
    input.bags.push_back({&features.at(lookups[l].feature), &tables[l].ids.position});
    input.rows.push_back(&tables[l].rows);
  }
  return model->SparseLogits(params, input);
}

}  // namespace

StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, const ImageInput& input,
                                          int batch_size, const RowPull& pull_rows) {
  EvalResult result;
  Tensor images;
  for (int64_t begin = 0; begin < ds.count; begin += batch_size) {
    const int64_t n = std::min<int64_t>(batch_size, ds.count - begin);
    Tensor logits;
    if (!model->lookups().empty()) {
      PS_ASSIGN_OR_RETURN(logits, LogitsOfIds(model, params, ds, begin, n, pull_rows));
    } else {
      PS_RETURN_IF_ERROR(data::PrepareEvalImages(ds, begin, n, input.preprocessing, input.height,
                                                 input.width, &images));
      PS_ASSIGN_OR_RETURN(logits, model->Logits(params, images));
    }
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
