#include "chief/tf_names.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

TfNameFn NamesFor(const std::string& optimizer, bool centered = false) {
  nn::VariableSpec w;
  w.name = "conv1/weights";
  proto::OptimizerConfig c;
  c.set_name(optimizer);
  c.set_learning_rate(0.1f);
  c.set_centered(centered);
  TfNameFn f = TfCheckpointNames({w}, c);
  EXPECT_TRUE(f != nullptr) << optimizer;
  return f;
}

// TF 1.x's slot names: the optimizer's name, then _1, _2 in the order its
// _create_slots makes them.
TEST(TfNames, SlotsAreNamedAsTensorFlowsOptimizersNameThem) {
  EXPECT_EQ(NamesFor("Momentum")("conv1/weights/Momentum"), "conv1/weights/Momentum");
  EXPECT_EQ(NamesFor("Adagrad")("conv1/weights/accumulator"), "conv1/weights/Adagrad");
  const TfNameFn adam = NamesFor("Adam");
  EXPECT_EQ(adam("conv1/weights/m"), "conv1/weights/Adam");
  EXPECT_EQ(adam("conv1/weights/v"), "conv1/weights/Adam_1");
  const TfNameFn ftrl = NamesFor("Ftrl");
  EXPECT_EQ(ftrl("conv1/weights/accumulator"), "conv1/weights/Ftrl");
  EXPECT_EQ(ftrl("conv1/weights/linear"), "conv1/weights/Ftrl_1");
  const TfNameFn rms = NamesFor("RMSProp", /*centered=*/true);
  EXPECT_EQ(rms("conv1/weights/rms"), "conv1/weights/RMSProp");
  EXPECT_EQ(rms("conv1/weights/mg"), "conv1/weights/RMSProp_1");
  EXPECT_EQ(rms("conv1/weights/momentum"), "conv1/weights/RMSProp_2");
  EXPECT_EQ(NamesFor("RMSProp")("conv1/weights/momentum"), "conv1/weights/RMSProp_1");
}

TEST(TfNames, VariablesAndMovingAveragesKeepTheirNames) {
  const TfNameFn adagrad = NamesFor("Adagrad");
  EXPECT_EQ(adagrad("conv1/weights"), "conv1/weights");
  EXPECT_EQ(adagrad("conv1/weights/ExponentialMovingAverage"),
            "conv1/weights/ExponentialMovingAverage");
  EXPECT_EQ(adagrad("other/accumulator"), "other/accumulator");  // "other" is no variable
}

}  // namespace
}  // namespace pstrain
