#include "chief/eval_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace pstrain {
namespace {

// The predictions of tests/sklearn/metrics_golden.py, and the values
// scikit-learn 1.2.1 (Debian 12's python3-sklearn) gives for them.
const std::vector<float> kP1 = {0.9f, 0.2f, 0.6f, 0.6f, 0.1f, 0.8f,
                                0.4f, 0.6f, 1.0f, 0.3f, 0.5f, 0.7f};
const std::vector<int32_t> kY2 = {1, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1};
const std::vector<std::vector<float>> kP3 = {
    {0.7f, 0.2f, 0.1f},   {0.1f, 0.8f, 0.1f}, {0.2f, 0.2f, 0.6f}, {0.3f, 0.4f, 0.3f},
    {0.5f, 0.25f, 0.25f}, {0.1f, 0.1f, 0.8f}, {0.6f, 0.3f, 0.1f}, {0.2f, 0.5f, 0.3f}};
const std::vector<int32_t> kY3 = {0, 1, 2, 0, 2, 2, 1, 1};

TEST(EvalMetrics, TwoClassesAsScikitLearnComputesThem) {
  std::vector<float> probs;
  for (float p : kP1) {
    probs.push_back(1 - p);
    probs.push_back(p);
  }
  const EvalMetrics m = ComputeEvalMetrics(probs, 2, kY2);
  EXPECT_EQ(m.examples, 12);
  EXPECT_NEAR(m.accuracy, 0.58333333333333337, 1e-12);
  EXPECT_NEAR(m.auc, 0.69444444444444442, 1e-12);     // ties at 0.6 count half
  EXPECT_NEAR(m.log_loss, 3.4472380438741137, 1e-6);  // a certain mistake, clipped
  EXPECT_NEAR(m.precision, 0.5714285714285714, 1e-12);
  EXPECT_NEAR(m.recall, 0.66666666666666663, 1e-12);
  EXPECT_EQ(MetricsText(m),
            "accuracy 0.5833, auc 0.6944, log loss 3.4472, precision 0.5714, recall 0.6667");
}

TEST(EvalMetrics, ThreeClassesAsScikitLearnComputesThem) {
  std::vector<float> probs;
  for (const auto& row : kP3) probs.insert(probs.end(), row.begin(), row.end());
  const EvalMetrics m = ComputeEvalMetrics(probs, 3, kY3);
  EXPECT_NEAR(m.accuracy, 0.625, 1e-12);
  EXPECT_NEAR(m.auc, 0.87777777777777777, 1e-12);
  EXPECT_NEAR(m.log_loss, 0.72514685284919855, 1e-6);
  EXPECT_NEAR(m.macro_f1, 0.62222222222222223, 1e-12);
}

TEST(EvalMetrics, AnExampleOfAClassUnseenInTrainingIsAWrongAnswerCounted) {
  // The three-class set and two more examples whose label the training data
  // lacked: each a wrong answer, counted, and out of the log loss.
  std::vector<float> probs;
  for (const auto& row : kP3) probs.insert(probs.end(), row.begin(), row.end());
  std::vector<int32_t> labels = kY3;
  for (int i = 0; i < 2; ++i) {
    probs.insert(probs.end(), {0.8f, 0.1f, 0.1f});
    labels.push_back(data::kUnseenClass);
  }
  const EvalMetrics m = ComputeEvalMetrics(probs, 3, labels);
  EXPECT_EQ(m.unseen_labels, 2);
  EXPECT_NEAR(m.accuracy, 0.625 * 8 / 10, 1e-12);
  EXPECT_NEAR(m.log_loss, 0.72514685284919855, 1e-6);
  EXPECT_NE(MetricsText(m).find(", 2 with labels unseen in training"), std::string::npos)
      << MetricsText(m);
}

TEST(EvalMetrics, AClassTheSetDoesNotHoldHasNoAucInTheMean) {
  // The three-class set with a fourth class of zero probability nowhere
  // labelled: the AUC is the three classes' mean, as before.
  std::vector<float> probs;
  for (const auto& row : kP3) {
    probs.insert(probs.end(), row.begin(), row.end());
    probs.push_back(0.0f);
  }
  const EvalMetrics m = ComputeEvalMetrics(probs, 4, kY3);
  EXPECT_NEAR(m.auc, 0.87777777777777777, 1e-12);
  EXPECT_NEAR(m.accuracy, 0.625, 1e-12);
}

TEST(EvalMetrics, EachMetricByItsName) {
  EvalMetrics m;
  m.auc = 0.75;
  m.log_loss = 0.5;
  EXPECT_EQ(*MetricNamed(m, "auc"), 0.75);
  EXPECT_EQ(*MetricNamed(m, "log_loss"), 0.5);
  EXPECT_TRUE(LowerIsBetter("log_loss"));
  EXPECT_FALSE(LowerIsBetter("auc"));
  EXPECT_NE(MetricNamed(m, "f1").status().message().find("is not accuracy, auc"),
            std::string::npos);
}

TEST(EvalMetrics, AnAucWithoutBothClassesIsNaN) {
  EXPECT_TRUE(std::isnan(RocAuc({0.1, 0.9}, {true, true})));
  EXPECT_EQ(RocAuc({0.1, 0.9}, {false, true}), 1.0);
  EXPECT_EQ(RocAuc({0.9, 0.1}, {false, true}), 0.0);
  EXPECT_EQ(RocAuc({0.5, 0.5}, {false, true}), 0.5);
}

}  // namespace
}  // namespace pstrain
