#include "ps/sync_replicas.h"

#include <gtest/gtest.h>

#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

proto::SyncConfig Sync(int replicas) {
  proto::SyncConfig c;
  c.set_enabled(true);
  c.set_replicas_to_aggregate(replicas);
  return c;
}

std::map<std::string, Tensor> Grad(float v) { return {{"w", Tensor({1}, {v})}}; }

TEST(SyncReplicas, ACompletedStepIsAppliedOnceWithTheStepItWasComputedAt) {
  SyncReplicas sync;
  PS_ASSERT_OK(sync.Reset(Sync(2), 5));
  std::vector<std::pair<float, int64_t>> applied;
  auto apply = [&](SyncAccumulator::Average average, int64_t computed_at) {
    applied.emplace_back(average.dense.at("w").data()[0], computed_at);
  };
  auto first = sync.Offer(0, 5, Grad(1), {}, apply);
  PS_ASSERT_OK(first.status());
  EXPECT_EQ(first->outcome, proto::ACCEPTED);
  EXPECT_TRUE(applied.empty());
  EXPECT_EQ(sync.DescribeStep(), " (1 of 2 gradients for step 5)");
  auto second = sync.Offer(1, 5, Grad(3), {}, apply);
  PS_ASSERT_OK(second.status());
  EXPECT_EQ(second->outcome, proto::STEP_COMPLETE);
  EXPECT_EQ(second->step, 6);
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_FLOAT_EQ(applied[0].first, 2.0f);
  EXPECT_EQ(applied[0].second, 5);
}

TEST(SyncReplicas, AResetKeepsTheLiveWorkersAndAsyncRefusesOffers) {
  SyncReplicas sync;
  auto none = [](SyncAccumulator::Average, int64_t) {};
  PS_EXPECT_CODE(sync.Offer(0, 0, Grad(1), {}, none).status(), Code::kFailedPrecondition);
  PS_EXPECT_CODE(sync.SetLiveReplicas(1, none).status(), Code::kFailedPrecondition);
  PS_ASSERT_OK(sync.Reset(Sync(3), 0));
  PS_ASSERT_OK(sync.SetLiveReplicas(1, none).status());
  PS_ASSERT_OK(sync.Reset(Sync(3), 10));  // a restore
  EXPECT_EQ(sync.stats().required, 1) << "the restore forgot the live workers";
  PS_EXPECT_CODE(sync.Reset(Sync(0), 0), Code::kInvalidArgument);
  EXPECT_TRUE(sync.enabled()) << "a refused reset changed the replicas";
}

TEST(SyncReplicas, FewerLiveWorkersCompleteTheHeldStepThroughApply) {
  SyncReplicas sync;
  PS_ASSERT_OK(sync.Reset(Sync(3), 0));
  int applied = 0;
  auto apply = [&](SyncAccumulator::Average, int64_t) { ++applied; };
  PS_ASSERT_OK(sync.Offer(0, 0, Grad(1), {}, apply).status());
  PS_ASSERT_OK(sync.Offer(1, 0, Grad(1), {}, apply).status());
  auto step = sync.SetLiveReplicas(2, apply);
  PS_ASSERT_OK(step.status());
  EXPECT_EQ(*step, 1);
  EXPECT_EQ(applied, 1);
}

}  // namespace
}  // namespace pstrain
