#include "nn/sparse/embedding_front.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "nn/grad_check.h"
#include "nn/graph_model.h"
#include "nn/model_spec.h"
#include "nn/sparse/test_ids.h"
#include "nn/towers.h"

namespace pstrain {
namespace nn {
namespace {

// A model of ids: LAYERS (embedding layers first) over two dense layers.
std::string SpecText(const std::string& lookups) {
  return R"(name: "ids" num_classes: 3 input { preprocessing: PIXEL_IDS } )" + lookups + R"(
    layer { name: "hidden" dense { units: 6 relu: true
      weights_initializer { truncated_normal_stddev: 0.5 } biases_initializer { constant: 0.1 } } }
    layer { name: "logits" dense { units: 3
      weights_initializer { truncated_normal_stddev: 0.5 } biases_initializer { constant: 0 } } }
  )";
}

StatusOr<std::unique_ptr<GraphModel>> ModelOf(const std::string& lookups) {
  PS_ASSIGN_OR_RETURN(proto::ModelSpec spec, ParseModelSpec(SpecText(lookups), "ids.pbtxt"));
  return GraphModel::Create(spec);
}

std::vector<Tensor> Params(const Model& model, std::mt19937* rng) {
  std::vector<Tensor> params;
  for (const VariableSpec& v : model.variables()) params.push_back(RandomTensor(v.shape, rng));
  return params;
}

// The loss's gradients with respect to the rows (a sparse gradient, one row
// per unique id) and the variables, against central differences, for each
// combiner, weighted or not.
class ModelOfIdsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ModelOfIdsTest, RowAndVariableGradientsMatchNumericalOnes) {
  auto model = ModelOf(R"(layer { name: "bag" embedding_bag { feature: "pixel_ids" dim: 4
                          combiner: ")" +
                       GetParam() + R"(" } })");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  ASSERT_EQ((*model)->lookups().size(), 1u);
  EXPECT_EQ((*model)->lookups()[0].table.name(), "bag/embedding_weights");
  EXPECT_EQ((*model)->example_shape(), (Shape{1, 1, 4}));
  TestIds batch;
  batch.Add({5, 9, 5}, {0.5f, 2.0f, 1.0f});
  batch.Add({9}, {1.5f});
  batch.Add({12, 5, 30, 31}, {1.0f, 0.25f, 3.0f, 2.0f});
  std::mt19937 rng(4);
  std::vector<Tensor> params = Params(**model, &rng);
  Tensor rows = RandomTensor({static_cast<int64_t>(batch.keys.size()), 4}, &rng);
  const SparseInput input{{{&batch.ids, &batch.position}}, {&rows}};
  const std::vector<int32_t> labels = {2, 0, 1};
  std::vector<Tensor> grads, row_grads;
  auto loss = (*model)->LossAndGradients(params, ModelInput::Ids(input), labels, &grads, &row_grads,
                                         nullptr);
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  ASSERT_EQ(row_grads.size(), 1u);
  ASSERT_EQ(row_grads[0].shape(), rows.shape());
  const auto loss_now = [&] {
    std::vector<Tensor> g, rg;
    auto l = (*model)->LossAndGradients(params, ModelInput::Ids(input), labels, &g, &rg, nullptr);
    PS_EXPECT_OK(l);
    return static_cast<double>(*l);
  };
  GradCheckOptions options;
  options.eps = 1e-3;
  options.atol = 1e-4;
  options.rtol = 2e-2;
  options.kink_tolerant = true;
  ExpectGradientMatches("rows", &rows, row_grads[0], loss_now, options);
  ExpectModelGradientsMatch((*model)->variables(), &params, grads, loss_now, options, &rng);
  // The logits of inference are those training computed (no dropout or
  // batch norm here).
  auto logits = (*model)->Logits(params, ModelInput::Ids(input));
  PS_ASSERT_OK(logits);
  EXPECT_EQ(logits->shape(), (Shape{3, 3}));
}

INSTANTIATE_TEST_SUITE_P(EveryCombiner, ModelOfIdsTest, ::testing::Values("sum", "mean", "sqrtn"));

TEST(ModelOfIds, AnEmbeddingOfOneIdPerExampleHasItsGradient) {
  auto model = ModelOf(R"(layer { name: "item" embedding { feature: "pixel_ids" dim: 3
                          vocabulary_size: 100 } })");
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  TestIds batch;
  for (int64_t id : {4, 17, 4, 99}) batch.Add({id});
  std::mt19937 rng(5);
  std::vector<Tensor> params = Params(**model, &rng);
  Tensor rows = RandomTensor({3, 3}, &rng);
  const SparseInput input{{{&batch.ids, &batch.position}}, {&rows}};
  const std::vector<int32_t> labels = {0, 1, 2, 1};
  std::vector<Tensor> grads, row_grads;
  PS_ASSERT_OK((*model)->LossAndGradients(params, ModelInput::Ids(input), labels, &grads,
                                          &row_grads, nullptr));
  GradCheckOptions options;
  options.eps = 1e-3;
  options.atol = 1e-4;
  options.rtol = 2e-2;
  options.kink_tolerant = true;
  ExpectGradientMatches(
      "rows", &rows, row_grads[0],
      [&] {
        std::vector<Tensor> g, rg;
        return static_cast<double>(
            *(*model)->LossAndGradients(params, ModelInput::Ids(input), labels, &g, &rg, nullptr));
      },
      options);

  // Two ids in one example, or one outside the vocabulary: refused, naming
  // the layer.
  TestIds two;
  two.Add({4});
  two.Add({4, 5});
  two.Add({6});
  two.Add({7});
  Tensor two_rows({4, 3});
  Status s =
      (*model)
          ->LossAndGradients(params, ModelInput::Ids({{{&two.ids, &two.position}}, {&two_rows}}),
                             labels, &grads, &row_grads, nullptr)
          .status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("layer item"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("takes exactly one"), std::string::npos) << s.ToString();
  TestIds outside;
  for (int64_t id : {4, 17, 100, 99}) outside.Add({id});
  Tensor outside_rows({4, 3});
  s = (*model)
          ->LossAndGradients(
              params, ModelInput::Ids({{{&outside.ids, &outside.position}}, {&outside_rows}}),
              labels, &grads, &row_grads, nullptr)
          .status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("id 100 is outside the vocabulary"), std::string::npos)
      << s.ToString();
}

TEST(ModelOfIds, SpecsThatDoNotHoldTogetherAreRefusedNamingTheLayer) {
  const struct {
    std::string lookups, error;
  } cases[] = {
      {R"(layer { name: "e" embedding_bag { feature: "words" dim: 4 } })",
       "no sparse feature 'words'"},
      {R"(layer { name: "e" embedding_bag { feature: "pixel_ids" dim: 0 } })", "dim must be"},
      {R"(layer { name: "e" embedding_bag { feature: "pixel_ids" dim: 4 combiner: "max" } })",
       "combiner 'max'"},
      {R"(layer { name: "e" embedding { feature: "pixel_ids" dim: 4 combiner: "sum" } })",
       "an embedding has no combiner"},
      {"", "no embedding layer looks them up"},
  };
  for (const auto& c : cases) {
    auto model = ModelOf(c.lookups);
    ASSERT_FALSE(model.ok()) << c.lookups;
    EXPECT_EQ(model.status().code(), Code::kInvalidArgument);
    EXPECT_NE(model.status().message().find(c.error), std::string::npos)
        << model.status().ToString();
  }
  // An embedding after a dense layer.
  auto spec = ParseModelSpec(R"(name: "late" num_classes: 3 input { preprocessing: PIXEL_IDS }
    layer { name: "bag" embedding_bag { feature: "pixel_ids" dim: 4 } }
    layer { name: "d" dense { units: 3 weights_initializer { constant: 0 }
                              biases_initializer { constant: 0 } } }
    layer { name: "again" embedding_bag { feature: "pixel_ids" dim: 4 } })",
                             "late.pbtxt");
  PS_ASSERT_OK(spec);
  auto late = GraphModel::Create(*spec);
  PS_ASSERT_CODE(late, Code::kInvalidArgument);
  EXPECT_NE(late.status().message().find("layer again (embedding_bag): embedding layers must come "
                                         "before every other layer"),
            std::string::npos)
      << late.status().ToString();
}

TEST(ModelOfIds, LooksUpTheFeaturesOfItsExamples) {
  const std::string examples = R"(name: "recommender" num_classes: 3
    input { examples { train_file: "train.tfrecords" label_key: "label"
                       feature { name: "movies" weight_key: "ratings" }
                       feature { name: "tags" hash_buckets: 1000 } } }
    layer { name: "watched" embedding_bag { feature: "movies" dim: 4 combiner: "sum" } }
    layer { name: "tagged" embedding_bag { feature: FEATURE dim: 2 } }
    layer { name: "logits" dense { units: 3
      weights_initializer { constant: 0 } biases_initializer { constant: 0 } } })";
  std::string good = examples;
  good.replace(good.find("FEATURE"), 7, "\"tags\"");
  auto spec = ParseModelSpec(good, "recommender.pbtxt");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto model = GraphModel::Create(*spec);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  EXPECT_EQ((*model)->example_shape(), (Shape{1, 1, 6}));
  std::string bad = examples;
  bad.replace(bad.find("FEATURE"), 7, "\"genres\"");
  auto refused = GraphModel::Create(*ParseModelSpec(bad, "recommender.pbtxt"));
  PS_ASSERT_CODE(refused, Code::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("no sparse feature 'genres'"), std::string::npos)
      << refused.status().ToString();
}

TEST(ModelOfIds, TakesNoImagesAndTrainsOnOneTower) {
  auto spec = ParseModelSpec(
      SpecText(R"(layer { name: "bag" embedding_bag { feature: "pixel_ids" dim: 4 } })"),
      "ids.pbtxt");
  PS_ASSERT_OK(spec);
  auto model = GraphModel::Create(*spec);
  PS_ASSERT_OK(model);
  std::mt19937 rng(6);
  const std::vector<Tensor> params = Params(**model, &rng);
  Status s = (*model)->Logits(params, Tensor({2, 1, 1, 4})).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("looks up ids"), std::string::npos) << s.ToString();
  auto towers = Towers::Create(*spec, 2);
  PS_ASSERT_CODE(towers, Code::kInvalidArgument);
  EXPECT_NE(towers.status().message().find("trains on one tower"), std::string::npos)
      << towers.status().ToString();
  PS_EXPECT_OK(Towers::Create(*spec, 1));
  // A model of images has no lookups and takes no ids.
  auto images = CreateModel("mnist");
  PS_ASSERT_OK(images);
  EXPECT_TRUE((*images)->lookups().empty());
  EXPECT_EQ((*images)->Logits(params, ModelInput::Ids({})).status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
