#include "nn/wide_deep_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "data/feature_batches.h"
#include "nn/grad_check.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {
namespace {

// A small census: two numeric columns, two string ones, a label.
const char kSpec[] = R"(
  name: "small_wide_deep" num_classes: NUM_CLASSES
  input { csv {
    column { name: "age" numeric: true } column { name: "hours" numeric: true }
    column { name: "education" } column { name: "occupation" } column { name: "label" }
    label_column: "label" label_vocabulary: [LABELS] } }
  feature_column { name: "age" numeric { key: "age" } }
  feature_column { name: "hours" numeric { key: "hours" } }
  feature_column { name: "age_b" bucketized { source: "age" boundaries: [30, 50] } }
  feature_column { name: "education" vocabulary_list { key: "education"
                   vocabulary: ["Bachelors", "HS-grad", "Masters"] } }
  feature_column { name: "occupation" hash_bucket { key: "occupation" hash_bucket_size: 50 } }
  feature_column { name: "cross" crossed { columns: ["age_b"] keys: ["education"]
                   hash_bucket_size: 20 } }
  feature_column { name: "education_indicator" indicator { source: "education" } }
  feature_column { name: "occupation_embedding" embedding { source: "occupation" dimension: 3
                   combiner: "sqrtn" } }
  wide_deep {
    linear_feature_columns: ["education", "occupation", "age_b", "cross", "hours"]
    dnn_feature_columns: ["age", "education_indicator", "occupation_embedding"]
    dnn_hidden_units: [5, 4]
  }
  loss_reduction: REDUCTION
)";

data::TabularDataset Rows() {
  data::TabularDataset ds;
  ds.columns = {{"age", true}, {"hours", true}, {"education", false}, {"occupation", false}};
  ds.numbers = {{0.25f, 0.61f, 0.38f, 0.9f}, {0.4f, -0.2f, 0.5f, 0.1f}, {}, {}};
  ds.strings = {{},
                {},
                {"Masters", "HS-grad", "Doctorate", "Bachelors"},
                {"Sales", "Tech-support", "Sales", "?"}};
  ds.labels = {1, 0, 0, 1};
  ds.count = 4;
  return ds;
}

// The same model with its DNN as layers: a cross layer over the DNN's
// input beside a dense layer over two of its columns and the embedding,
// each read by name.
const char kGraphDnn[] = R"(
  layer { name: "cross" cross {} inputs: ["input"] }
  layer { name: "side_in" concat {} inputs: ["age", "education_indicator"] }
  layer { name: "side" dense { units: 2
          weights_initializer { truncated_normal_stddev: 0.5 } biases_initializer { constant: 0.1 } } }
  layer { name: "stack" concat {} inputs: ["cross", "side", "occupation_embedding"] }
  layer { name: "logits" dense { units: UNITS
          weights_initializer { truncated_normal_stddev: 0.5 } biases_initializer { constant: 0 } } }
)";

std::string SpecText(int classes, const std::string& reduction = "MEAN", bool graph = false) {
  std::string text = kSpec;
  if (graph) {
    text.replace(text.find("dnn_hidden_units: [5, 4]"), 24, "");
    std::string layers = kGraphDnn;
    layers.replace(layers.find("UNITS"), 5, classes == 2 ? "1" : std::to_string(classes));
    text += layers;
  }
  text.replace(text.find("REDUCTION"), 9, reduction);
  text.replace(text.find("NUM_CLASSES"), 11, std::to_string(classes));
  text.replace(text.find("LABELS"), 6, classes == 2 ? "\"a\", \"b\"" : "\"a\", \"b\", \"c\"");
  return text;
}

// The rows of every table for a batch's unique ids, drawn at random, and the
// model's input over them.
struct Looked {
  std::vector<std::vector<int64_t>> keys;
  std::vector<std::vector<int32_t>> position;
  std::vector<Tensor> rows;
};

// Two classes or three; the DNN of hidden units or of layers (a graph).
class WideDeepTest : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(WideDeepTest, RowAndVariableGradientsMatchNumericalOnes) {
  const auto [classes, graph] = GetParam();
  auto spec = ParseModelSpec(SpecText(classes, "MEAN", graph), "small.pbtxt");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  auto model = WideDeepModel::Create(*spec, 3);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const WideDeepModel& m = **model;
  // The DNN's embedding first, then the linear columns in name order, the
  // bias last.
  std::vector<std::string> tables;
  for (const EmbeddingLookup& l : m.lookups()) tables.push_back(l.table.name());
  EXPECT_EQ(tables,
            (std::vector<std::string>{
                "dnn/input_from_feature_columns/input_layer/occupation_embedding/"
                "embedding_weights",
                "linear/linear_model/age_b/weights", "linear/linear_model/cross/weights",
                "linear/linear_model/education/weights", "linear/linear_model/hours/weights",
                "linear/linear_model/occupation/weights", "linear/linear_model/bias_weights"}));
  EXPECT_EQ(m.dense_columns(), (std::vector<std::string>{"age", "education_indicator"}));

  data::TabularDataset ds = Rows();
  auto columns = data::FeatureColumns::FromSpec(*spec);
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  if (classes > 2) ds.labels = {2, 0, 1, 2};
  auto featurized = data::Featurize(ds, *columns, FeatureRequestOf(m));
  ASSERT_TRUE(featurized.ok()) << featurized.status().ToString();
  data::Batch batch;
  data::GatherBatch(*featurized, {0, 1, 2, 3}, &batch);
  ASSERT_EQ(batch.dense.shape(), (Shape{4, 4}));  // age, then the indicator's 3

  std::mt19937 rng(11);
  Looked looked;
  SparseInput input;
  looked.keys.resize(m.lookups().size());
  looked.position.resize(m.lookups().size());
  looked.rows.resize(m.lookups().size());
  for (size_t l = 0; l < m.lookups().size(); ++l) {
    const RaggedIds& ids = batch.sparse.at(m.lookups()[l].feature);
    for (int64_t id : ids.values) {
      auto at = std::find(looked.keys[l].begin(), looked.keys[l].end(), id);
      if (at == looked.keys[l].end()) at = looked.keys[l].insert(looked.keys[l].end(), id);
      looked.position[l].push_back(static_cast<int32_t>(at - looked.keys[l].begin()));
    }
    looked.rows[l] = RandomTensor(
        {static_cast<int64_t>(looked.keys[l].size()), m.lookups()[l].table.dim()}, &rng);
  }
  for (size_t l = 0; l < m.lookups().size(); ++l) {
    input.bags.push_back({&batch.sparse.at(m.lookups()[l].feature), &looked.position[l]});
    input.rows.push_back(&looked.rows[l]);
  }
  input.dense = &batch.dense;
  std::vector<Tensor> params;
  for (const VariableSpec& v : m.variables()) params.push_back(RandomTensor(v.shape, &rng));
  std::vector<Tensor> grads, row_grads;
  auto loss = (*model)->LossAndGradients(params, ModelInput::Ids(input), batch.labels, &grads,
                                         &row_grads, nullptr);
  ASSERT_TRUE(loss.ok()) << loss.status().ToString();
  const auto loss_now = [&] {
    std::vector<Tensor> g, rg;
    return static_cast<double>(*(*model)->LossAndGradients(params, ModelInput::Ids(input),
                                                           batch.labels, &g, &rg, nullptr));
  };
  GradCheckOptions options;
  options.eps = 1e-3;
  options.atol = 1e-4;
  options.rtol = 2e-2;
  options.kink_tolerant = true;
  for (size_t l = 0; l < m.lookups().size(); ++l) {
    ExpectGradientMatches(m.lookups()[l].table.name().c_str(), &looked.rows[l], row_grads[l],
                          loss_now, options);
  }
  ExpectModelGradientsMatch(m.variables(), &params, grads, loss_now, options, &rng);
  // Two classes: one logit z, given as [0, z].
  auto logits = (*model)->Logits(params, ModelInput::Ids(input));
  PS_ASSERT_OK(logits);
  EXPECT_EQ(logits->shape(), (Shape{4, classes}));
  if (classes == 2) {
    for (int64_t b = 0; b < 4; ++b) EXPECT_EQ((*logits)[2 * b], 0.0f);
  }
}

INSTANTIATE_TEST_SUITE_P(LogisticAndSoftmax, WideDeepTest,
                         ::testing::Combine(::testing::Values(2, 3), ::testing::Bool()));

TEST(WideDeep, ADnnIsItsLayersOrItsHiddenUnitsNotBoth) {
  std::string text = SpecText(2, "MEAN", true);
  text.replace(text.find("wide_deep {"), 11, "wide_deep { dnn_hidden_units: [3]");
  auto spec = ParseModelSpec(text, "both.pbtxt");
  PS_ASSERT_OK(spec);
  auto model = WideDeepModel::Create(*spec);
  PS_EXPECT_CODE(model.status(), Code::kInvalidArgument);
  EXPECT_NE(model.status().message().find("its layers or dnn_hidden_units, not both"),
            std::string::npos)
      << model.status().ToString();
}

TEST(WideDeep, ASpecThatDoesNotHoldTogetherIsRefusedNamingTheColumn) {
  std::string text = SpecText(2);
  text.replace(text.find("\"cross\", \"hours\""), 16, "\"cross\", \"nope\"");
  auto spec = ParseModelSpec(text, "bad.pbtxt");
  PS_ASSERT_OK(spec);
  auto model = WideDeepModel::Create(*spec);
  PS_ASSERT_CODE(model, Code::kInvalidArgument);
  EXPECT_NE(model.status().message().find("no feature column nope"), std::string::npos)
      << model.status().ToString();
}

}  // namespace
}  // namespace nn
}  // namespace pstrain

namespace pstrain {
namespace nn {
namespace {

// TF 1.x's estimators sum the batch's loss (the default): the mean's loss
// and every gradient, times the batch.
TEST(WideDeep, ASummedLossIsTheMeanTimesTheBatch) {
  std::vector<std::unique_ptr<WideDeepModel>> models;
  for (const char* reduction : {"MEAN", "SUM"}) {
    auto spec = ParseModelSpec(SpecText(2, reduction), "small.pbtxt");
    PS_ASSERT_OK(spec);
    auto model = WideDeepModel::Create(*spec, 3);
    PS_ASSERT_OK(model);
    models.push_back(std::move(model).value());
  }
  auto spec = ParseModelSpec(SpecText(2), "small.pbtxt");
  auto columns = data::FeatureColumns::FromSpec(*spec);
  PS_ASSERT_OK(columns);
  auto featurized = data::Featurize(Rows(), *columns, FeatureRequestOf(*models[0]));
  PS_ASSERT_OK(featurized);
  data::Batch batch;
  data::GatherBatch(*featurized, {0, 1, 2, 3}, &batch);
  std::mt19937 rng(5);
  std::vector<std::vector<int32_t>> position(models[0]->lookups().size());
  std::vector<Tensor> rows;
  SparseInput input;
  for (size_t l = 0; l < models[0]->lookups().size(); ++l) {
    const RaggedIds& ids = batch.sparse.at(models[0]->lookups()[l].feature);
    for (size_t j = 0; j < ids.values.size(); ++j) position[l].push_back(static_cast<int32_t>(j));
    rows.push_back(RandomTensor(
        {static_cast<int64_t>(ids.values.size()), models[0]->lookups()[l].table.dim()}, &rng));
  }
  for (size_t l = 0; l < rows.size(); ++l) {
    input.bags.push_back({&batch.sparse.at(models[0]->lookups()[l].feature), &position[l]});
    input.rows.push_back(&rows[l]);
  }
  input.dense = &batch.dense;
  std::vector<Tensor> params;
  for (const VariableSpec& v : models[0]->variables())
    params.push_back(RandomTensor(v.shape, &rng));
  std::vector<Tensor> grads[2], row_grads[2];
  float loss[2];
  for (int r = 0; r < 2; ++r) {
    auto l = models[r]->LossAndGradients(params, ModelInput::Ids(input), batch.labels, &grads[r],
                                         &row_grads[r], nullptr);
    ASSERT_TRUE(l.ok()) << l.status().ToString();
    loss[r] = *l;
  }
  EXPECT_NEAR(loss[1], 4 * loss[0], 1e-5 * loss[1]);
  for (size_t v = 0; v < grads[0].size(); ++v) {
    for (int64_t i = 0; i < grads[0][v].size(); ++i) {
      EXPECT_NEAR(grads[1][v][i], 4 * grads[0][v][i], 1e-5 + 1e-5 * std::fabs(grads[1][v][i]));
    }
  }
  for (size_t l = 0; l < row_grads[0].size(); ++l) {
    for (int64_t i = 0; i < row_grads[0][l].size(); ++i) {
      EXPECT_NEAR(row_grads[1][l][i], 4 * row_grads[0][l][i],
                  1e-5 + 1e-5 * std::fabs(row_grads[1][l][i]));
    }
  }
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
