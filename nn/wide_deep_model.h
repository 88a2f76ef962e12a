// WideDeepModel: TensorFlow's DNNLinearCombinedClassifier over feature
// columns (proto/model.proto's WideDeepSpec, data/feature_columns.h).
//
//   logits = linear(linear columns) + dnn(dnn columns)
//
// The linear part is TF's linear_model with sparse_combiner "sum": each
// linear column is a table on the ps, "linear/linear_model/<column>/weights",
// of one row of `units` per id, starting at zero; a categorical column's
// ids look up their rows (summed, weighted for a weighted column), a
// numeric column is one row weighted by the value, and the bias is a table
// of one row ("linear/linear_model/bias_weights"). They train with the
// linear optimizer (FTRL by default).
// The DNN reads its columns in the order of their names, as TF's
// input_layer: numeric values, indicators' multi-hot vectors and embedding
// columns (tables "dnn/input_from_feature_columns/input_layer/<column>/
// embedding_weights", combined), through dense ReLU layers of
// dnn_hidden_units (TF's "dnn/hiddenlayer_K/kernel|bias") to "dnn/logits",
// or through the spec's layers instead (a graph, nn/graph_model.h: DCN's
// cross layers, DeepFM's fm), which read the DNN's input ("input") or any
// of its columns by name.
// units is 1 for two classes (the logistic loss of one logit; Logits gives
// [0, logit] per example, whose softmax is the sigmoid), else the number of
// classes (softmax cross-entropy); the loss is summed over the batch (TF
// 1.x's default) or averaged (loss_reduction).
//
// Thread safety: as Model; one thread at a time.
#ifndef PSTRAIN_NN_WIDE_DEEP_MODEL_H_
#define PSTRAIN_NN_WIDE_DEEP_MODEL_H_

#include <memory>
#include <string>
#include <vector>

#include "data/feature_batches.h"
#include "nn/graph_model.h"
#include "nn/model.h"
#include "nn/sparse/embedding_front.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// What a model reads from its rows: each lookup's feature, the dense
// columns of a WideDeepModel (none for another model).
data::FeatureRequest FeatureRequestOf(const Model& model);

class WideDeepModel : public Model {
 public:
  // InvalidArgument, naming the model and column, for a spec without
  // wide_deep or CSV input, a column the spec does not define (or that
  // FeatureColumns refuses), a linear column that is neither categorical nor
  // numeric, a DNN column that is neither numeric, indicator nor
  // embedding, no columns at all, hidden units < 1, or both hidden units and
  // layers (GraphModel's refusals for those).
  static StatusOr<std::unique_ptr<WideDeepModel>> Create(const proto::ModelSpec& spec,
                                                         uint64_t seed = 0);

  const std::vector<VariableSpec>& variables() const override { return dnn_->variables(); }
  Shape example_shape() const override { return dnn_->example_shape(); }
  int num_classes() const override { return num_classes_; }
  std::string backend() const override { return dnn_->backend(); }
  // The DNN's embedding lookups, then the linear columns' (bias last).
  const std::vector<EmbeddingLookup>& lookups() const override { return lookups_; }
  // The DNN's dense columns, in the order the input gives them.
  const std::vector<std::string>& dense_columns() const override { return dense_columns_; }
  int64_t dense_width() const { return dense_width_; }
  using Model::Logits;
  using Model::LossAndGradients;
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const ModelInput& input,
                                   const std::vector<int32_t>& labels, std::vector<Tensor>* grads,
                                   std::vector<Tensor>* row_grads, StepHooks* hooks) override;
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const ModelInput& input) override;

 private:
  WideDeepModel() = default;
  // The logits [N, units] of the training or inference pass into logits_.
  Status Forward(Mode mode, const std::vector<Tensor>& params, const SparseInput& input);
  // The DNN's part of `input` (its lookups) and the linear part's.
  SparseInput DnnPart(const SparseInput& input) const;

  std::string name_;
  int num_classes_ = 2;
  int units_ = 1;
  bool sum_loss_ = true;  // the batch's loss summed (TF 1.x), not averaged
  std::vector<EmbeddingLookup> lookups_;
  size_t num_dnn_lookups_ = 0;
  std::vector<std::string> dense_columns_;
  int64_t dense_width_ = 0;
  EmbeddingFront dnn_front_;
  std::unique_ptr<GraphModel> dnn_;
  // Scratch of the latest pass.
  Tensor embedded_, dnn_input_, d_dnn_input_, d_embedded_, linear_, logits_, dlogits_;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_WIDE_DEEP_MODEL_H_
