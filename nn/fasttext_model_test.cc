// fastText's example-by-example updates (nn/fasttext_model.h): at a small
// rate they are a step down the summed loss's gradient (the network's own,
// checked against numerical gradients in nn/sparse/embedding_front_test.cc);
// and each example is taken with the updates of those before it.
#include "nn/fasttext_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"
#include "nn/model_spec.h"
#include "nn/sparse/test_ids.h"

namespace pstrain {
namespace nn {
namespace {

constexpr int kDim = 4;
constexpr int kClasses = 3;

std::string SpecText(const std::string& reduction) {
  return R"(name: "ft" num_classes: 3 loss_reduction: )" + reduction + R"(
    input { preprocessing: PIXEL_IDS }
    layer { name: "words" embedding_bag { feature: "pixel_ids" dim: 4 combiner: "mean" } }
    layer { name: "output" dense { units: 3
      weights_initializer { truncated_normal_stddev: 0.5 } biases_initializer { constant: 0 } } }
  )";
}

class FastTextModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto spec = ParseModelSpec(SpecText("EXAMPLE_BY_EXAMPLE"), "ft.pbtxt");
    PS_ASSERT_OK(spec);
    auto model = CreateModel(*spec);
    PS_ASSERT_OK(model);
    model_ = std::move(model).value();
    std::mt19937 rng(7);
    for (const VariableSpec& v : model_->variables())
      params_.push_back(RandomTensor(v.shape, &rng));
    params_[1] = Tensor(params_[1].shape());  // fastText's output has no bias: 0, kept
    batch_.Add({1, 2, 2, 7});                 // a word twice counts twice
    batch_.Add({7});
    batch_.Add({3, 1, 9});
    batch_.Add({});  // a line without input is skipped, as fastText skips it
    batch_.Add({9, 2});
    rows_ = RandomTensor({static_cast<int64_t>(batch_.keys.size()), kDim}, &rng);
    labels_ = {0, 2, 1, 1, 2};
  }

  ModelInput Input(float lr, const Tensor* rows = nullptr) {
    ModelInput input = ModelInput::Ids({{{&batch_.ids, &batch_.position}}, {rows ? rows : &rows_}});
    input.learning_rate = lr;
    return input;
  }

  std::unique_ptr<Model> model_;
  std::vector<Tensor> params_;
  TestIds batch_;
  Tensor rows_;
  std::vector<int32_t> labels_;
};

TEST_F(FastTextModelTest, AtASmallRateTheUpdatesAreAStepDownTheSummedLoss) {
  constexpr float kLr = 1e-4f;
  std::vector<Tensor> deltas, row_deltas;
  PS_ASSERT_OK(
      model_->LossAndGradients(params_, Input(kLr), labels_, &deltas, &row_deltas, nullptr));
  // The network's own summed loss and its gradient.
  auto spec = ParseModelSpec(SpecText("SUM"), "ft.pbtxt");
  PS_ASSERT_OK(spec);
  auto net = GraphModel::Create(*spec);
  PS_ASSERT_OK(net);
  std::vector<Tensor> grads, row_grads;
  auto loss = (*net)->LossAndGradients(params_, Input(kLr), labels_, &grads, &row_grads, nullptr);
  PS_ASSERT_OK(loss);
  auto within = [](const Tensor& delta, const Tensor& grad, const char* what) {
    ASSERT_EQ(delta.shape(), grad.shape()) << what;
    for (int64_t i = 0; i < grad.size(); ++i) {
      EXPECT_NEAR(delta[i] / kLr, grad[i], 2e-3 + 2e-3 * std::fabs(grad[i]))
          << what << " element " << i;
    }
  };
  within(deltas[0], grads[0], "output/weights");
  within(row_deltas[0], row_grads[0], "the rows");
  for (int64_t i = 0; i < deltas[1].size(); ++i) EXPECT_EQ(deltas[1][i], 0.0f) << "bias moved";
}

TEST_F(FastTextModelTest, EachExampleIsTakenWithTheUpdatesOfThoseBeforeIt) {
  constexpr float kLr = 0.5f;  // fastText's usual rate: the updates are large
  // The first example alone, then the same example twice.
  TestIds one, twice;
  one.Add({1, 2, 2, 7});
  twice.Add({1, 2, 2, 7});
  twice.Add({1, 2, 2, 7});
  Tensor rows({3, kDim});
  std::mt19937 rng(3);
  rows = RandomTensor({3, kDim}, &rng);
  auto input = [&](TestIds* ids, const Tensor* r) {
    ModelInput in = ModelInput::Ids({{{&ids->ids, &ids->position}}, {r}});
    in.learning_rate = kLr;
    return in;
  };
  std::vector<Tensor> d1, r1, d2, r2, unused, unused_rows;
  auto first = model_->LossAndGradients(params_, input(&one, &rows), {0}, &d1, &r1, nullptr);
  PS_ASSERT_OK(first);
  auto both = model_->LossAndGradients(params_, input(&twice, &rows), {0, 0}, &d2, &r2, nullptr);
  PS_ASSERT_OK(both);
  // The second copy's loss is the first's after its update.
  std::vector<Tensor> after = params_;
  for (int64_t i = 0; i < after[0].size(); ++i) after[0][i] -= d1[0][i];
  Tensor rows_after = rows;
  for (int64_t i = 0; i < rows_after.size(); ++i) rows_after[i] -= r1[0][i];
  auto second = model_->LossAndGradients(after, input(&one, &rows_after), {0}, &unused,
                                         &unused_rows, nullptr);
  PS_ASSERT_OK(second);
  EXPECT_NEAR(*both, *first + *second, 1e-5 * std::fabs(*both));
  EXPECT_LT(*second, *first) << "the update did not lower the example's loss";
}

TEST_F(FastTextModelTest, RefusesImagesANegativeRateAndAnotherNetwork) {
  std::vector<Tensor> grads, row_grads;
  PS_EXPECT_CODE(
      model_->LossAndGradients(params_, Input(-0.1f), labels_, &grads, &row_grads, nullptr),
      Code::kInvalidArgument);
  // At the end of a linear decay the rate is 0: nothing moves.
  PS_ASSERT_OK(model_->LossAndGradients(params_, Input(0), labels_, &grads, &row_grads, nullptr));
  for (int64_t i = 0; i < grads[0].size(); ++i) EXPECT_EQ(grads[0][i], 0.0f);
  Tensor images({1, 1, 1, kDim});
  PS_EXPECT_CODE(model_->LossAndGradients(params_, images, {0}, &grads), Code::kInvalidArgument);
  std::vector<int32_t> bad = labels_;
  bad[1] = kClasses;
  PS_EXPECT_CODE(model_->LossAndGradients(params_, Input(0.1f), bad, &grads, &row_grads, nullptr),
                 Code::kInvalidArgument);
  auto relu = ParseModelSpec(R"(name: "ft" num_classes: 3 loss_reduction: EXAMPLE_BY_EXAMPLE
    input { preprocessing: PIXEL_IDS }
    layer { name: "words" embedding_bag { feature: "pixel_ids" dim: 4 } }
    layer { name: "output" dense { units: 3 relu: true } })",
                             "relu.pbtxt");
  PS_ASSERT_OK(relu);
  auto refused = CreateModel(*relu);
  PS_ASSERT_CODE(refused, Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("fastText's network"), std::string::npos)
      << refused.status().ToString();
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
