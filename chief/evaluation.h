// Precision @ 1 of a model's variables on a labelled image set (a model of
// ids: on the images as its input gives them ids, with the rows pulled from
// the ps tasks).
#ifndef PSTRAIN_CHIEF_EVALUATION_H_
#define PSTRAIN_CHIEF_EVALUATION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "chief/eval_metrics.h"
#include "core/status.h"
#include "core/tensor.h"
#include "data/feature_batches.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"
#include "proto/model.pb.h"
#include "ps/client/ps_fleet.h"

namespace pstrain {

// How labelled images become the model's input for evaluation: the model
// spec's preprocessing, to its input height and width
// (data/input_pipeline.h's PrepareEvalImages).
struct ImageInput {
  proto::InputSpec::Preprocessing preprocessing = proto::InputSpec::SCALE;
  int height = 0;
  int width = 0;
};
ImageInput ImageInputOf(const proto::ModelSpec& spec);

struct EvalResult {
  int64_t correct = 0;
  int64_t examples = 0;
  double accuracy() const { return examples == 0 ? 0.0 : static_cast<double>(correct) / examples; }
  // A model of columns': every metric of chief/eval_metrics.h.
  std::optional<EvalMetrics> metrics;
  // ", auc 0.9012, log loss 0.3120, precision 0.7400, recall 0.6100" or
  // "" without metrics: what the evaluation lines add after the accuracy.
  std::string MetricsSuffix() const;
};

// The tensors to evaluate, in model order, from `tensors` (a checkpoint or
// the ps tasks' state): each trainable variable's moving average when
// use_moving_averages is set and every trainable variable has one, else the
// variables; non-trainable variables (batch-norm statistics) as they are.
// *used_averages (may be null) says which. InvalidArgument naming `source`
// and the tensor when one is missing or has another shape.
StatusOr<std::vector<Tensor>> SelectEvalParams(const nn::Model& model,
                                               const std::map<std::string, Tensor>& tensors,
                                               bool use_moving_averages, const std::string& source,
                                               bool* used_averages);

// For a model of ids: fills each table's rows for its unique ids
// (PsFleet::PullVariablesAndRows' TableStep, already split by ps).
using RowPull = std::function<Status(std::vector<PsFleet::TableStep>* tables)>;

// Set by another thread to stop an evaluation between two batches (then
// Aborted); may be null.
using EvalCancel = const std::atomic<bool>*;

// Runs every example of `ds`, prepared as `input` says, through the model in
// batches of batch_size. A model of ids needs pull_rows (InvalidArgument
// without it).
StatusOr<EvalResult> EvaluatePrecisionAt1(nn::Model* model, const std::vector<Tensor>& params,
                                          const data::ImageDataset& ds, const ImageInput& input,
                                          int batch_size = 1000, const RowPull& pull_rows = nullptr,
                                          EvalCancel cancel = nullptr);

// Each scalar an evaluation gives TensorBoard, to `add`:
// "eval/precision_at_1" (the accuracy) and, with metrics, "eval/auc",
// "eval/log_loss" and "eval/precision" and "eval/recall" (two classes) or
// "eval/macro_f1"; the first error `add` returns.
Status ForEachEvalScalar(const EvalResult& eval,
                         const std::function<Status(const std::string& tag, double value)>& add);

// A model of columns on every row of `rows` (data/feature_batches.h), in
// batches of batch_size, with the rows of its tables pulled: accuracy and
// the other metrics.
StatusOr<EvalResult> EvaluateColumns(nn::Model* model, const std::vector<Tensor>& params,
                                     const data::FeaturizedRows& rows, const RowPull& pull_rows,
                                     int batch_size = 1000, EvalCancel cancel = nullptr);

// The batch of the chief's and the evaluator's evaluations: small enough
// that a batch's activations stay in the last-level cache (mnist's conv1
// output is 20 MB at 200 images, 100 MB at 1,000). The evaluator's whole
// run on the 10,000 Fashion-MNIST test images, start-up included, took
// 1.02 to 1.09 CPU seconds at 100 and 200 against 1.23 to 1.29 at 1,000,
// and 0.58 s of wall time against 0.72 s (2-core AMD EPYC, 32 MiB L3).
constexpr int kEvalBatch = 200;
// A model of ids or of columns pulls its rows from the ps tasks once a
// batch: it evaluates in fewer, larger batches.
constexpr int kEvalBatchWithLookups = 1000;

// The one evaluation of `params` on a model's test set, whatever the model:
// a model of columns on its rows (`rows`), any other on the images
// (`images`, prepared as `input` says), in batches of kEvalBatch, or
// kEvalBatchWithLookups for a model with lookups. A model of ids
// pulls each batch's rows through pull_rows (from the ps tasks, or from a
// checkpoint; InvalidArgument, from its first batch, when null); a model
// without tables never calls it.
StatusOr<EvalResult> EvaluateTestSet(nn::Model* model, const std::vector<Tensor>& params,
                                     const data::ImageDataset* images,
                                     const data::FeaturizedRows* rows, const ImageInput& input,
                                     const RowPull& pull_rows, EvalCancel cancel = nullptr);

// What the chief evaluates a state pulled from the ps tasks with. Its model
// and fleet serve one thread at a time (both are thread-compatible): the
// evaluation while training has its own (chief/evaluation_thread.h).
struct StateEvaluation {
  nn::Model* model = nullptr;
  // A model of ids pulls each batch's rows through it; may be null for any
  // other.
  PsFleet* fleet = nullptr;
  const data::ImageDataset* test_set = nullptr;     // null for a model of columns
  const data::FeaturizedRows* test_rows = nullptr;  // a model of columns' test set
  ImageInput input;
  bool use_moving_averages = false;

  // Precision @ 1 (and a model of columns' metrics) on the test set of the
  // variables, or their moving averages when use_moving_averages and the
  // state has them (said once in the log when it has not), in `state`.
  StatusOr<EvalResult> Evaluate(const PsFleet::State& state, EvalCancel cancel = nullptr) const;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_EVALUATION_H_
