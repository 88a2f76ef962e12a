// The metrics of a classifier's evaluation, as the chief's evaluation lines,
// the evaluator and TensorBoard report them, defined as scikit-learn's
// metrics are (and TF's estimators report them):
//   accuracy   predictions (the most probable class) equal to the label;
//   auc        area under the ROC curve, ties between scores counted half
//              (roc_auc_score); with more than two classes, the mean over
//              the classes of each one against the rest (multi_class="ovr",
//              average="macro") over the classes the set holds;
//   log_loss   mean -log p(label), p clipped to [eps, 1 - eps] with eps the
//              double's machine epsilon (scikit-learn's eps="auto");
//   precision, recall  of class 1 at threshold 0.5 (p(1) > 0.5), two
//              classes only;
//   macro_f1   mean over the classes of each one's F1 (f1_score
//              average="macro"), more than two classes only.
// A metric a set cannot define (AUC without a positive or a negative, a
// precision without predicted positives) is NaN. Stateless: thread-safe.
#ifndef PSTRAIN_CHIEF_EVAL_METRICS_H_
#define PSTRAIN_CHIEF_EVAL_METRICS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/feature_batches.h"

namespace pstrain {

struct EvalMetrics {
  int64_t examples = 0;
  double accuracy = 0;
  double auc = 0;
  double log_loss = 0;
  double precision = 0;  // two classes
  double recall = 0;     // two classes
  double macro_f1 = 0;   // more than two classes
  int classes = 0;
  // Examples whose label the training data lacked (data::kUnseenClass).
  int64_t unseen_labels = 0;
};

// probabilities: examples x classes, each row summing to 1; labels in
// [0, classes), or data::kUnseenClass: a wrong answer, left out of log_loss
// and of each class's counts.
EvalMetrics ComputeEvalMetrics(const std::vector<float>& probabilities, int classes,
                               const std::vector<int32_t>& labels);

// The area under the ROC curve of `scores` for the examples with
// positive[i] (roc_auc_score); NaN without positives or negatives.
double RocAuc(const std::vector<double>& scores, const std::vector<bool>& positive);

// The metric of that name ("accuracy", "auc", "log_loss", "precision",
// "recall", "macro_f1"); InvalidArgument naming the known ones for another.
StatusOr<double> MetricNamed(const EvalMetrics& m, const std::string& name);
// Whether a lower value of the metric is the better one (log_loss).
inline bool LowerIsBetter(const std::string& name) { return name == "log_loss"; }

// "accuracy 0.8512, auc 0.9021, log loss 0.3211, precision 0.7312, recall
// 0.6010" (two classes) or "..., macro-F1 0.8311" (more).
std::string MetricsText(const EvalMetrics& m);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_EVAL_METRICS_H_
