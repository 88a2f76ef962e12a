#include "chief/evaluation.h"

#include <algorithm>
#include <cmath>

#include <glog/logging.h>

#include "data/input_pipeline.h"
#include "data/pixel_ids.h"
#include "ps/client/table_steps.h"
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

std::string EvalResult::MetricsSuffix() const {
  if (!metrics) return "";
  const std::string text = MetricsText(*metrics);
  // The text starts with the accuracy, which the lines give already.
  const size_t comma = text.find(", ");
  return comma == std::string::npos ? "" : text.substr(comma);
}

Status ForEachEvalScalar(const EvalResult& eval,
                         const std::function<Status(const std::string& tag, double value)>& add) {
  PS_RETURN_IF_ERROR(add("eval/precision_at_1", eval.accuracy()));
  if (!eval.metrics) return OkStatus();
  const EvalMetrics& m = *eval.metrics;
  PS_RETURN_IF_ERROR(add("eval/auc", m.auc));
  PS_RETURN_IF_ERROR(add("eval/log_loss", m.log_loss));
  if (m.unseen_labels > 0) {
    PS_RETURN_IF_ERROR(add("eval/unseen_labels", static_cast<double>(m.unseen_labels)));
  }
  if (m.classes == 2) {
    PS_RETURN_IF_ERROR(add("eval/precision", m.precision));
    return add("eval/recall", m.recall);
  }
  return add("eval/macro_f1", m.macro_f1);
}

namespace {

// A model of ids' logits on a batch of its features.
StatusOr<Tensor> LogitsOfBatch(nn::Model* model, const std::vector<Tensor>& params,
                               const data::Batch& batch, const RowPull& pull_rows) {
  if (pull_rows == nullptr) {
    return InvalidArgument("evaluating a model of ids needs its rows from the ps tasks");
  }
  std::vector<PsFleet::TableStep> tables;
  PS_RETURN_IF_ERROR(TableStepsOf(model->lookups(), batch, &tables));
  PS_RETURN_IF_ERROR(pull_rows(&tables));
  return model->Logits(params, ModelInputOf(model->lookups(), batch, tables));
}

// A model of ids' logits on images [begin, begin + n) of `ds`.
StatusOr<Tensor> LogitsOfIds(nn::Model* model, const std::vector<Tensor>& params,
                             const data::ImageDataset& ds, int64_t begin, int64_t n,
                             const RowPull& pull_rows) {
  data::Batch batch;
  PS_RETURN_IF_ERROR(data::PrepareEvalPixelIds(ds, begin, n, &batch.sparse));
  return LogitsOfBatch(model, params, batch, pull_rows);
}

Status CheckNotCancelled(EvalCancel cancel) {
  if (cancel != nullptr && cancel->load(std::memory_order_relaxed)) {
    return Aborted("the evaluation was cancelled");
  }
  return OkStatus();
}

}  // namespace

StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, const ImageInput& input,
                                          int batch_size, const RowPull& pull_rows,
                                          EvalCancel cancel) {
  EvalResult result;
  Tensor images;
  for (int64_t begin = 0; begin < ds.count; begin += batch_size) {
    PS_RETURN_IF_ERROR(CheckNotCancelled(cancel));
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

StatusOr<EvalResult> EvaluateColumns(nn::Model* model, const std::vector<Tensor>& params,
                                     const data::FeaturizedRows& rows, const RowPull& pull_rows,
                                     int batch_size, EvalCancel cancel) {
  std::vector<float> probabilities;
  data::Batch batch;
  std::vector<int64_t> chunk;
  int classes = 0;
  for (int64_t begin = 0; begin < rows.count; begin += batch_size) {
    PS_RETURN_IF_ERROR(CheckNotCancelled(cancel));
    chunk.clear();
    for (int64_t i = begin; i < std::min<int64_t>(rows.count, begin + batch_size); ++i) {
      chunk.push_back(i);
    }
    data::GatherBatch(rows, chunk, &batch);
    PS_ASSIGN_OR_RETURN(Tensor logits, LogitsOfBatch(model, params, batch, pull_rows));
    classes = static_cast<int>(logits.dim(1));
    // Each row's softmax, for the metrics.
    for (int64_t i = 0; i < logits.dim(0); ++i) {
      const float* z = logits.data() + i * classes;
      const float top = *std::max_element(z, z + classes);
      double sum = 0;
      for (int c = 0; c < classes; ++c) sum += std::exp(static_cast<double>(z[c] - top));
      for (int c = 0; c < classes; ++c) {
        probabilities.push_back(
            static_cast<float>(std::exp(static_cast<double>(z[c] - top)) / sum));
      }
    }
  }
  EvalResult result;
  result.metrics = ComputeEvalMetrics(probabilities, classes, rows.labels);
  result.examples = rows.count;
  result.correct = static_cast<int64_t>(std::llround(result.metrics->accuracy * rows.count));
  return result;
}

StatusOr<EvalResult> StateEvaluation::Evaluate(const PsFleet::State& state,
                                               EvalCancel cancel) const {
  bool averaged = false;
  PS_ASSIGN_OR_RETURN(
      std::vector<Tensor> params,
      SelectEvalParams(*model, state, use_moving_averages, "the ps tasks' state", &averaged));
  if (use_moving_averages && !averaged) {
    LOG_FIRST_N(WARNING, 1) << "no moving averages on the ps (--ema_decay=0?); evaluating the "
                               "variables";
  }
  // A model of ids: the rows of each batch's ids, as they are on the ps now.
  std::vector<Tensor> variables;
  RowPull pull_rows;
  if (fleet != nullptr) {
    pull_rows = [&](std::vector<PsFleet::TableStep>* tables) {
      PS_RETURN_IF_ERROR(fleet->Shard(tables));
      return fleet->PullVariablesAndRows(&variables, tables, nullptr);
    };
  }
  return EvaluateTestSet(model, params, test_set, test_rows, input, pull_rows, cancel);
}

StatusOr<EvalResult> EvaluateTestSet(nn::Model* model, const std::vector<Tensor>& params,
                                     const data::ImageDataset* images,
                                     const data::FeaturizedRows* rows, const ImageInput& input,
                                     const RowPull& pull_rows, EvalCancel cancel) {
  if (model->lookups().empty()) {
    return EvaluatePrecisionAt1(model, params, *images, input, kEvalBatch, nullptr, cancel);
  }
  if (rows != nullptr) {
    return EvaluateColumns(model, params, *rows, pull_rows, kEvalBatchWithLookups, cancel);
  }
  return EvaluatePrecisionAt1(model, params, *images, input, kEvalBatchWithLookups, pull_rows,
                              cancel);
}

}  // namespace pstrain
