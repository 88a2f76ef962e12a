#include "ps/variable_store.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace pstrain {
namespace {

std::unique_ptr<Optimizer> Sgd(float lr) {
  proto::OptimizerConfig c;
  c.set_name("GradientDescent");
  c.set_learning_rate(lr);
  return std::move(Optimizer::Create(c)).value();
}

TEST(VariableStore, ConcurrentPushesNeverLoseAnUpdate) {
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1000}));
  VariableStore::InitOptions opts;
  opts.holds_global_step = true;
  ASSERT_TRUE(store.Initialize(opts, Sgd(1.0f), std::move(init)).ok());

  // 8 threads x 200 pushes of gradient -1 each: every element must end at 1600.
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&store] {
      std::map<std::string, Tensor> g;
      Tensor grad({1000});
      grad.Fill(-1.0f);
      g.emplace("w", std::move(grad));
      for (int i = 0; i < 200; ++i) ASSERT_TRUE(store.ApplyGradients(g, true).ok());
    });
  }
  for (auto& t : threads) t.join();
  auto w = store.Read({"w"});
  ASSERT_TRUE(w.ok());
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ((*w)[0].second[i], 1600.0f);
  EXPECT_EQ(store.global_step(), 1600);
}

TEST(VariableStore, RejectsWholePushWhenOneGradientIsWrong) {
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("a", Tensor({2}, {1, 1}));
  init.emplace("b", Tensor({2}, {1, 1}));
  ASSERT_TRUE(store.Initialize({}, Sgd(1.0f), std::move(init)).ok());
  std::map<std::string, Tensor> g;
  g.emplace("a", Tensor({2}, {1, 1}));
  g.emplace("b", Tensor({3}));
  auto r = store.ApplyGradients(g, false);
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ((*store.Read({"a"}))[0].second[0], 1.0f);  // untouched

  std::map<std::string, Tensor> unknown;
  unknown.emplace("zz", Tensor({2}));
  EXPECT_EQ(store.ApplyGradients(unknown, false).status().code(), Code::kNotFound);
}

TEST(VariableStore, PlacementFingerprintIsChecked) {
  VariableStore store;
  EXPECT_EQ(store.CheckPlacement(7).code(), Code::kFailedPrecondition);
  VariableStore::InitOptions opts;
  opts.placement_fingerprint = 7;
  ASSERT_TRUE(store.Initialize(opts, Sgd(1.0f), {}).ok());
  EXPECT_TRUE(store.CheckPlacement(7).ok());
  Status s = store.CheckPlacement(8);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("placement mismatch"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
