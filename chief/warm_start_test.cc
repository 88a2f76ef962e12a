#include "chief/warm_start.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chief/tf_bundle.h"
#include "core/test_util.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data(), t.data() + t.size());
}

nn::VariableSpec Variable(const std::string& name, Shape shape) {
  nn::VariableSpec v;
  v.name = name;
  v.shape = std::move(shape);
  return v;
}

WarmStartOptions Options(const std::string& prefix, const std::string& vars,
                         const std::string& map) {
  WarmStartOptions o;
  o.prefix = prefix;
  o.vars = vars;
  o.map = map;
  return o;
}

class WarmStart : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.path() + "/model.ckpt-100";
    auto writer = TfBundleWriter::Create(prefix_);
    PS_ASSERT_OK(writer);
    PS_ASSERT_OK((*writer)->AddFloat("conv1/weights", Tensor({2, 3}, {1, 2, 3, 4, 5, 6})));
    PS_ASSERT_OK((*writer)->AddFloat("old/biases", Tensor({3}, {7, 8, 9})));
    PS_ASSERT_OK((*writer)->AddFloat("old/biases/Adagrad", Tensor({3}, {0.5f, 0.5f, 0.5f})));
    ASSERT_TRUE(
        (*writer)->AddFloat("old/biases/ExponentialMovingAverage", Tensor({3}, {6, 7, 8})).ok());
    PS_ASSERT_OK((*writer)->AddInt64("global_step", {}, {100}));
    PS_ASSERT_OK((*writer)->Finish());
  }
  StatusOr<std::map<std::string, Tensor>> Warm(const std::string& vars, const std::string& map) {
    return WarmStartValues(variables_, Options(prefix_, vars, map));
  }
  Status Error(const std::string& vars, const std::string& map) { return Warm(vars, map).status(); }

  test_util::TempDir dir_;
  std::string prefix_;
  std::vector<nn::VariableSpec> variables_ = {Variable("conv1/weights", {2, 3}),
                                              Variable("softmax/biases", {3}),
                                              Variable("softmax/weights", {4, 3})};
};

TEST_F(WarmStart, TheMatchingVariablesTakeTheCheckpointsValuesUnderTheirMappedNames) {
  auto only_conv = Warm("conv1/.*", "");
  ASSERT_TRUE(only_conv.ok()) << only_conv.status().ToString();
  ASSERT_EQ(only_conv->size(), 1u);
  EXPECT_EQ(Values(only_conv->at("conv1/weights")), (std::vector<float>{1, 2, 3, 4, 5, 6}));

  auto mapped = Warm("conv1/weights|softmax/biases", "old/biases=softmax/biases");
  ASSERT_TRUE(mapped.ok()) << mapped.status().ToString();
  ASSERT_EQ(mapped->size(), 2u);
  EXPECT_EQ(Values(mapped->at("softmax/biases")), (std::vector<float>{7, 8, 9}));
}

// Asked for, the slots (under TF's names, below the variable's mapped TF
// name) and the moving averages come too.
TEST_F(WarmStart, SlotsAndMovingAveragesComeUnderTheirTfNamesWhenAsked) {
  WarmStartOptions options = Options(prefix_, "softmax/biases", "old/biases=softmax/biases");
  options.slots = true;
  options.slot_names = {"accumulator"};
  options.tf_name = [](const std::string& name) {
    const std::string suffix = "/accumulator";
    return name.size() > suffix.size() &&
                   name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0
               ? name.substr(0, name.size() - suffix.size()) + "/Adagrad"
               : name;
  };
  options.moving_average = true;
  auto values = WarmStartValues(variables_, options);
  ASSERT_TRUE(values.ok()) << values.status().ToString();
  ASSERT_EQ(values->size(), 3u);
  EXPECT_EQ(Values(values->at("softmax/biases/accumulator")),
            (std::vector<float>{0.5f, 0.5f, 0.5f}));
  EXPECT_EQ(Values(values->at("softmax/biases/ExponentialMovingAverage")),
            (std::vector<float>{6, 7, 8}));
  options.vars = "conv1/weights";  // its checkpoint holds no slot
  EXPECT_NE(
      WarmStartValues(variables_, options)
          .status()
          .message()
          .find("no slot conv1/weights/accumulator (conv1/weights/Adagrad in the checkpoint)"),
      std::string::npos);
}

TEST_F(WarmStart, WhatTheCheckpointCannotGiveIsRefusedNamingTheVariable) {
  const struct {
    std::string vars, map, error;
  } cases[] = {
      {".*", "old/biases=softmax/biases", "no variable softmax/weights"},
      {"softmax/biases", "", "no variable softmax/biases"},
      {"softmax/weights", "conv1/weights=softmax/weights",
       "variable softmax/weights (conv1/weights in the checkpoint) has shape [2,3], the "
       "model's [4,3]"},
      {"softmax/weights", "global_step=softmax/weights", "is DT_INT64, not float32"},
      {".*", "old/biases", "'old/biases' is not tf_name=pstrain_name"},
      {".*", "old/biases=nope", "the model has no variable nope"},
      {"(", "", "is not a regex"},
      {"nothing", "", "matches no variable"},
  };
  for (const auto& c : cases) {
    Status s = Error(c.vars, c.map);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.error;
    EXPECT_NE(s.message().find(c.error), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(WarmStartValues(variables_, Options(dir_.path() + "/none", ".*", "")).status().code(),
            Code::kNotFound);
}

// A Keras Sequential saved by tf.train.Checkpoint
// (tests/tensorflow/keras_golden.py): tensors keyed by object path, found
// through the object graph by the names Keras saved them under, the
// Sequential's own scope ("sequential/dense_1/kernel") left out.
TEST(WarmStartKeras, AKerasCheckpointGivesEachVariableByItsKerasName) {
  const std::string prefix =
      std::string(PSTRAIN_SOURCE_DIR) + "/chief/testdata/keras/sequential.ckpt";
  const std::vector<nn::VariableSpec> variables = {
      Variable("dense_1/kernel", {784, 8}), Variable("dense_1/bias", {8}),
      Variable("dense_2/kernel", {8, 8}),   Variable("dense_2/bias", {8}),
      Variable("dense_3/kernel", {8, 10}),  Variable("dense_3/bias", {10})};
  auto values = WarmStartValues(variables, Options(prefix, ".*", ""));
  PS_ASSERT_OK(values);
  for (size_t i = 0; i < variables.size(); ++i) {
    const Tensor& t = values->at(variables[i].name);
    ASSERT_EQ(t.shape(), variables[i].shape) << variables[i].name;
    for (int64_t j = 0; j < t.size(); ++j) {
      ASSERT_FLOAT_EQ(t[j], 0.01f * j + i) << variables[i].name << " at " << j;
    }
  }
  const auto missing =
      WarmStartValues({Variable("dense_9/kernel", {8, 10})}, Options(prefix, ".*", ""));
  EXPECT_EQ(missing.status().code(), Code::kInvalidArgument);
  EXPECT_NE(missing.status().message().find("no variable dense_9/kernel"), std::string::npos)
      << missing.status().ToString();
}

}  // namespace
}  // namespace pstrain
