// Keras models read from the JSON TensorFlow's Keras writes
// (nn/testdata/keras, made by tests/tensorflow/keras_golden.py): the
// network each becomes, its variables under Keras's names, and what pstrain
// lacks refused naming the layer.
#include "nn/keras_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "nn/graph_model.h"
#include "nn/model_spec.h"

namespace pstrain {
namespace nn {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(PSTRAIN_SOURCE_DIR) + "/nn/testdata/keras/" + name;
}

std::string ReadFixture(const std::string& name) {
  std::ifstream in(Fixture(name));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Each variable's name and shape.
std::map<std::string, Shape> VariablesOf(const Model& model) {
  std::map<std::string, Shape> vars;
  for (const VariableSpec& v : model.variables()) vars[v.name] = v.shape;
  return vars;
}

// What a layer reads, joined: "conv2d,batch_normalization_relu".
std::string Inputs(const proto::LayerSpec& layer) {
  std::string joined;
  for (const std::string& in : layer.inputs()) joined += (joined.empty() ? "" : ",") + in;
  return joined;
}

const proto::LayerSpec* Layer(const proto::ModelSpec& spec, const std::string& name) {
  for (const proto::LayerSpec& l : spec.layer()) {
    if (l.name() == name) return &l;
  }
  return nullptr;
}

class KerasResidual : public ::testing::TestWithParam<std::string> {};

// Keras 3 and Keras 2 write the residual block differently; both become
// the same graph, its variables under Keras's names.
TEST_P(KerasResidual, BecomesTheGraphOfItsLayersUnderKerasNames) {
  auto spec = LoadModelSpec("keras:" + Fixture(GetParam()));
  PS_ASSERT_OK(spec);
  EXPECT_EQ(spec->name(), "residual");
  EXPECT_EQ(spec->num_classes(), 10);
  EXPECT_EQ(std::vector<int64_t>(spec->input_shape().begin(), spec->input_shape().end()),
            (std::vector<int64_t>{12, 12, 1}));
  const proto::LayerSpec* conv = Layer(*spec, "conv2d");
  ASSERT_NE(conv, nullptr);
  EXPECT_TRUE(conv->conv2d().relu());
  EXPECT_EQ(conv->conv2d().padding(), proto::SAME);
  EXPECT_EQ(Inputs(*conv), "input");
  EXPECT_EQ(conv->conv2d().weights_initializer().variance_scaling().mode(),
            proto::VarianceScalingSpec::FAN_AVG);
  const proto::LayerSpec* conv1 = Layer(*spec, "conv2d_1");
  ASSERT_NE(conv1, nullptr);
  EXPECT_TRUE(conv1->conv2d().no_bias());
  EXPECT_EQ(conv1->conv2d().weights_initializer().variance_scaling().scale(), 2.0f);
  const proto::LayerSpec* bn = Layer(*spec, "batch_normalization");
  ASSERT_NE(bn, nullptr);
  EXPECT_FLOAT_EQ(bn->batch_norm().momentum(), 0.9f);
  EXPECT_FLOAT_EQ(bn->batch_norm().epsilon(), 1e-3f);
  const proto::LayerSpec* add = Layer(*spec, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(Inputs(*add), "conv2d,activation");
  const proto::LayerSpec* dropout = Layer(*spec, "dropout");
  ASSERT_NE(dropout, nullptr);
  EXPECT_FLOAT_EQ(dropout->dropout().keep_prob(), 0.75f);
  const proto::LayerSpec* pool = Layer(*spec, "average_pooling2d");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->avg_pool().stride(), 1);
  EXPECT_EQ(spec->layer(spec->layer_size() - 1).name(), "dense");

  auto model = GraphModel::Create(*spec);
  PS_ASSERT_OK(model);
  EXPECT_FALSE((*model)->is_chain());
  const std::map<std::string, Shape> want = {{"conv2d/kernel", {3, 3, 1, 4}},
                                             {"conv2d/bias", {4}},
                                             {"conv2d_1/kernel", {3, 3, 4, 4}},
                                             {"batch_normalization/gamma", {4}},
                                             {"batch_normalization/beta", {4}},
                                             {"batch_normalization/moving_mean", {4}},
                                             {"batch_normalization/moving_variance", {4}},
                                             {"dense/kernel", {144, 10}},
                                             {"dense/bias", {10}}};
  EXPECT_EQ(VariablesOf(**model), want);
}

INSTANTIATE_TEST_SUITE_P(Versions, KerasResidual,
                         ::testing::Values("residual.json", "residual_keras2.json"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "residual.json" ? "Keras3" : "Keras2";
                         });

class KerasSequential : public ::testing::TestWithParam<std::string> {};

// A Sequential stays a chain; tanh and sigmoid follow their Dense layers,
// the L2 regularizer becomes the same loss term as weight decay.
TEST_P(KerasSequential, BecomesAChainWithItsActivationsAndDecay) {
  auto spec = LoadModelSpec("keras:" + Fixture(GetParam()));
  PS_ASSERT_OK(spec);
  EXPECT_EQ(spec->num_classes(), 10);
  std::vector<std::string> kinds;
  for (const proto::LayerSpec& l : spec->layer()) {
    EXPECT_EQ(l.inputs_size(), 0) << l.name();
    kinds.push_back(
        proto::LayerSpec::descriptor()->FindFieldByNumber(static_cast<int>(l.kind_case()))->name());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"flatten", "dense", "activation", "dense",
                                             "activation", "dense"}));
  EXPECT_EQ(spec->layer(2).activation().function(), proto::ActivationSpec::TANH);
  EXPECT_EQ(spec->layer(4).activation().function(), proto::ActivationSpec::SIGMOID);
  EXPECT_FLOAT_EQ(spec->layer(1).dense().weight_decay(), 0.02f);  // 2 * l2
  EXPECT_FLOAT_EQ(spec->layer(3).dense().weight_decay(), 0.0f);
  auto model = GraphModel::Create(*spec);
  PS_ASSERT_OK(model);
  EXPECT_TRUE((*model)->is_chain());
  const std::string first = spec->layer(1).name();
  EXPECT_EQ(VariablesOf(**model).at(first + "/kernel"), (Shape{784, 8}));
}

INSTANTIATE_TEST_SUITE_P(Versions, KerasSequential,
                         ::testing::Values("sequential.json", "sequential_keras2.json"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param == "sequential.json" ? "Keras3" : "Keras2";
                         });

// Inputs of ids, each looked up by an Embedding: embedding layers of the
// inputs' names as features, tables under Keras's "embeddings".
TEST(KerasModel, EmbeddingsOfIdInputsBecomeTablesOfTheirFeatures) {
  auto spec = LoadModelSpec("keras:" + Fixture("ids.json"));
  PS_ASSERT_OK(spec);
  ASSERT_GE(spec->layer_size(), 2);
  EXPECT_EQ(spec->layer(0).embedding().feature(), "user");
  EXPECT_EQ(spec->layer(0).embedding().vocabulary_size(), 50);
  EXPECT_EQ(spec->layer(1).embedding().feature(), "item");
  EXPECT_EQ(spec->layer(1).embedding().dim(), 4);
  EXPECT_FLOAT_EQ(spec->layer(0).embedding().initializer_uniform(), 0.05f);
  EXPECT_EQ(spec->input_shape_size(), 0);
  EXPECT_EQ(spec->input().examples().label_key(), "label");
  EXPECT_EQ(spec->input().examples().feature_size(), 2);
  auto model = GraphModel::Create(*spec);
  PS_ASSERT_OK(model);
  std::vector<std::string> tables;
  for (const EmbeddingLookup& l : (*model)->lookups()) tables.push_back(l.table.name());
  EXPECT_EQ(tables, (std::vector<std::string>{spec->layer(0).name() + "/embeddings",
                                              spec->layer(1).name() + "/embeddings"}));
}

// The residual model's JSON with one substitution, which must be refused
// with an error naming `names`.
struct Refusal {
  std::string what, from, to, names;
};

class KerasRefusals : public ::testing::TestWithParam<Refusal> {};

TEST_P(KerasRefusals, NameTheLayerAndTheOption) {
  const Refusal& r = GetParam();
  std::string json = ReadFixture("residual.json");
  const size_t at = json.find(r.from);
  ASSERT_NE(at, std::string::npos) << r.from;
  json.replace(at, r.from.size(), r.to);
  auto spec = ModelSpecFromKerasJson(json, "net.json");
  ASSERT_FALSE(spec.ok()) << r.what;
  EXPECT_EQ(spec.status().code(), Code::kInvalidArgument) << spec.status().ToString();
  EXPECT_NE(spec.status().message().find(r.names), std::string::npos) << spec.status().ToString();
}

INSTANTIATE_TEST_SUITE_P(
    WhatPstrainLacks, KerasRefusals,
    ::testing::Values(
        Refusal{"unknown_layer", "\"class_name\": \"MaxPooling2D\"", "\"class_name\": \"LSTM\"",
                "max_pooling2d (LSTM): pstrain has no such layer"},
        Refusal{"kernel_not_square", "\"kernel_size\": [3, 3]", "\"kernel_size\": [3, 1]",
                "conv2d (Conv2D): kernel_size must be two equal"},
        Refusal{"dilation", "\"dilation_rate\": [1, 1]", "\"dilation_rate\": [2, 2]",
                "conv2d (Conv2D): dilation_rate"},
        Refusal{"frozen", "\"name\": \"conv2d\", \"trainable\": true",
                "\"name\": \"conv2d\", \"trainable\": false",
                "conv2d (Conv2D): trainable is false"},
        Refusal{"activation", "\"activation\": \"relu\"", "\"activation\": \"elu\"",
                "conv2d (Conv2D): activation 'elu' has no pstrain counterpart"},
        Refusal{"channels_first", "\"data_format\": \"channels_last\"",
                "\"data_format\": \"channels_first\"", "data_format is 'channels_first'"},
        Refusal{"not_a_model", "\"class_name\": \"Functional\"", "\"class_name\": \"Layer\"",
                "not a Keras model's JSON"},
        Refusal{"not_json", "{", "[[", "not JSON"}),
    [](const ::testing::TestParamInfo<Refusal>& info) { return info.param.what; });

// The layer's options are read as Keras writes them: a softmax anywhere
// but the output, or a Dense reading an image, is refused.
TEST(KerasModel, ASoftmaxBeforeTheOutputOrADenseOfAnImageIsRefused) {
  std::string json = ReadFixture("residual.json");
  const std::string relu = "\"activation\": \"relu\"";
  json.replace(json.find(relu), relu.size(), "\"activation\": \"softmax\"");
  auto spec = ModelSpecFromKerasJson(json, "net.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("conv2d (Conv2D): softmax before the output"),
            std::string::npos)
      << spec.status().ToString();

  std::string sequential = ReadFixture("sequential.json");
  const std::string flatten = "\"class_name\": \"Flatten\"";
  sequential.replace(sequential.find(flatten), flatten.size(), "\"class_name\": \"Dropout\"");
  spec = ModelSpecFromKerasJson(sequential, "seq.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("reads a tensor of rank 3"), std::string::npos)
      << spec.status().ToString();
}

// Inference after a training step gives what it gives before one: a step
// leaves nothing behind that inference reads.
TEST(KerasModel, InferenceAfterATrainingStepIsInferenceBeforeIt) {
  auto spec = LoadModelSpec("keras:" + Fixture("residual.json"));
  PS_ASSERT_OK(spec);
  auto model = GraphModel::Create(*spec);
  PS_ASSERT_OK(model);
  std::vector<Tensor> params;
  for (const VariableSpec& v : (*model)->variables()) params.push_back(InitialValue(v, 1));
  Tensor images({4, 12, 12, 1});
  for (int64_t i = 0; i < images.size(); ++i) images[i] = std::sin(0.37f * i);
  auto before = (*model)->Logits(params, ModelInput::Images(images));
  PS_ASSERT_OK(before);
  std::vector<Tensor> grads;
  PS_ASSERT_OK((*model)->LossAndGradients(params, images, {1, 2, 3, 4}, &grads));
  auto after = (*model)->Logits(params, ModelInput::Images(images));
  PS_ASSERT_OK(after);
  for (int64_t i = 0; i < before->size(); ++i) EXPECT_EQ((*before)[i], (*after)[i]) << "at " << i;
}

TEST(KerasModel, AMissingFileIsNotFound) {
  auto spec = LoadModelSpec("keras:/nonexistent/model.json");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), Code::kNotFound) << spec.status().ToString();
}

}  // namespace
}  // namespace nn
}  // namespace pstrain
