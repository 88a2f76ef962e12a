#include "chief/warm_start.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chief/tf_bundle.h"
#include "core/test_util.h"

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

class WarmStart : public ::testing::Test {
 protected:
  void SetUp() override {
    prefix_ = dir_.path() + "/model.ckpt-100";
    auto writer = TfBundleWriter::Create(prefix_);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->AddFloat("conv1/weights", Tensor({2, 3}, {1, 2, 3, 4, 5, 6})).ok());
    ASSERT_TRUE((*writer)->AddFloat("old/biases", Tensor({3}, {7, 8, 9})).ok());
    ASSERT_TRUE((*writer)->AddInt64("global_step", {}, {100}).ok());
    ASSERT_TRUE((*writer)->Finish().ok());
  }
  StatusOr<std::map<std::string, Tensor>> Warm(const std::string& vars, const std::string& map) {
    return WarmStartValues(variables_, {prefix_, vars, map});
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
  EXPECT_EQ(WarmStartValues(variables_, {dir_.path() + "/none", ".*", ""}).status().code(),
            Code::kNotFound);
}

}  // namespace
}  // namespace pstrain
