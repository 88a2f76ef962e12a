#include "chief/eval_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

namespace pstrain {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double Ratio(double num, double den) { return den == 0 ? kNaN : num / den; }

}  // namespace

double RocAuc(const std::vector<double>& scores, const std::vector<bool>& positive) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney: the positives' ranks (tied scores share their mean rank),
  // less the least they could sum to, over positives x negatives.
  double rank_sum = 0;
  int64_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2;
    for (size_t k = i; k < j; ++k) {
      if (positive[order[k]]) {
        rank_sum += mean_rank;
        ++positives;
      }
    }
    i = j;
  }
  const int64_t negatives = static_cast<int64_t>(n) - positives;
  if (positives == 0 || negatives == 0) return kNaN;
  const double p = static_cast<double>(positives);
  return (rank_sum - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

namespace {

// Each class's counts: examples predicted, labelled, both.
struct ClassCounts {
  std::vector<int64_t> true_pos, predicted, actual;
};

// The AUC of class c against the rest.
double ClassAuc(const std::vector<float>& probabilities, int classes,
                const std::vector<int32_t>& labels, int c) {
  const size_t n = labels.size();
  std::vector<double> scores(n);
  std::vector<bool> positive(n);
  for (size_t i = 0; i < n; ++i) {
    scores[i] = probabilities[i * classes + c];
    positive[i] = labels[i] == c;
  }
  return RocAuc(scores, positive);
}

// Two classes: the AUC of class 1, its precision and recall at 0.5.
void BinaryMetrics(const std::vector<float>& probabilities, const std::vector<int32_t>& labels,
                   EvalMetrics* m) {
  m->auc = ClassAuc(probabilities, 2, labels, 1);
  int64_t tp = 0, fp = 0, fn = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const bool said = probabilities[i * 2 + 1] > 0.5f;
    tp += said && labels[i] == 1;
    fp += said && labels[i] == 0;
    fn += !said && labels[i] == 1;
  }
  m->precision = Ratio(static_cast<double>(tp), static_cast<double>(tp + fp));
  m->recall = Ratio(static_cast<double>(tp), static_cast<double>(tp + fn));
}

// More classes: the mean AUC of each against the rest, and macro-F1.
void MulticlassMetrics(const std::vector<float>& probabilities, int classes,
                       const std::vector<int32_t>& labels, const ClassCounts& counts,
                       EvalMetrics* m) {
  double auc_sum = 0, f1_sum = 0;
  int auc_classes = 0;
  for (int c = 0; c < classes; ++c) {
    // A class the set does not hold has no AUC: the mean is over the others.
    const double auc = ClassAuc(probabilities, classes, labels, c);
    if (!std::isnan(auc)) {
      auc_sum += auc;
      ++auc_classes;
    }
    // F1 = 2 tp / (2 tp + fp + fn); a class never predicted nor present
    // scores 0, as scikit-learn's zero_division default gives.
    const double den = static_cast<double>(counts.predicted[c] + counts.actual[c]);
    f1_sum += den == 0 ? 0.0 : 2.0 * static_cast<double>(counts.true_pos[c]) / den;
  }
  m->auc = auc_classes == 0 ? kNaN : auc_sum / auc_classes;
  m->macro_f1 = f1_sum / classes;
}

}  // namespace

EvalMetrics ComputeEvalMetrics(const std::vector<float>& probabilities, int classes,
                               const std::vector<int32_t>& labels) {
  EvalMetrics m;
  m.classes = classes;
  m.examples = static_cast<int64_t>(labels.size());
  if (m.examples == 0 || classes < 2) return m;
  ClassCounts counts{std::vector<int64_t>(classes, 0), std::vector<int64_t>(classes, 0),
                     std::vector<int64_t>(classes, 0)};
  double correct = 0, loss = 0;
  for (int64_t i = 0; i < m.examples; ++i) {
    const float* p = probabilities.data() + i * classes;
    const int32_t label = labels[i];
    const int predicted_class = static_cast<int>(std::max_element(p, p + classes) - p);
    ++counts.predicted[predicted_class];
    if (label == data::kUnseenClass) {
      ++m.unseen_labels;
      continue;
    }
    correct += predicted_class == label;
    ++counts.actual[label];
    counts.true_pos[label] += predicted_class == label;
    constexpr double kEps = std::numeric_limits<double>::epsilon();
    loss -= std::log(std::clamp(static_cast<double>(p[label]), kEps, 1 - kEps));
  }
  m.accuracy = correct / static_cast<double>(m.examples);
  const int64_t seen = m.examples - m.unseen_labels;
  m.log_loss = seen == 0 ? kNaN : loss / static_cast<double>(seen);
  if (classes == 2) {
    BinaryMetrics(probabilities, labels, &m);
  } else {
    MulticlassMetrics(probabilities, classes, labels, counts, &m);
  }
  return m;
}

StatusOr<double> MetricNamed(const EvalMetrics& m, const std::string& name) {
  if (name == "accuracy") return m.accuracy;
  if (name == "auc") return m.auc;
  if (name == "log_loss") return m.log_loss;
  if (name == "precision") return m.precision;
  if (name == "recall") return m.recall;
  if (name == "macro_f1") return m.macro_f1;
  return InvalidArgument("metric '" + name +
                         "' is not accuracy, auc, log_loss, precision, recall or macro_f1");
}

std::string MetricsText(const EvalMetrics& m) {
  char line[192];
  if (m.classes == 2) {
    std::snprintf(line, sizeof(line),
                  "accuracy %.4f, auc %.4f, log loss %.4f, precision %.4f, recall %.4f", m.accuracy,
                  m.auc, m.log_loss, m.precision, m.recall);
  } else {
    std::snprintf(line, sizeof(line), "accuracy %.4f, auc %.4f, log loss %.4f, macro-F1 %.4f",
                  m.accuracy, m.auc, m.log_loss, m.macro_f1);
  }
  std::string text = line;
  if (m.unseen_labels > 0) {
    text += ", " + std::to_string(m.unseen_labels) + " with labels unseen in training";
  }
  return text;
}

}  // namespace pstrain
