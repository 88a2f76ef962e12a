#include "ps/sync_accumulator.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

using Outcome = SyncAccumulator::Outcome;

std::map<std::string, Tensor> Grad(float v) {
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({2}, {v, 2 * v}));
  return g;
}

TEST(SyncAccumulator, AveragesTheFirstRAndAdvances) {
  SyncAccumulator acc({/*replicas_to_aggregate=*/2, /*strict=*/false}, 5);
  EXPECT_EQ(*acc.Offer(0, 5, Grad(1)), Outcome::kAccepted);
  EXPECT_EQ(acc.pending(), 1);
  EXPECT_EQ(*acc.Offer(1, 5, Grad(3)), Outcome::kStepComplete);
  auto avg = acc.TakeAverage().dense;
  EXPECT_EQ(avg.at("w")[0], 2.0f);
  EXPECT_EQ(avg.at("w")[1], 4.0f);
  EXPECT_EQ(acc.step(), 6);
  EXPECT_EQ(acc.pending(), 0);
}

TEST(SyncAccumulator, DropsStaleAndCountsThem) {
  SyncAccumulator acc({2, false}, 7);
  EXPECT_EQ(*acc.Offer(2, 6, Grad(100)), Outcome::kStale);
  EXPECT_EQ(*acc.Offer(2, 3, Grad(100)), Outcome::kStale);
  EXPECT_EQ(acc.stale_dropped(), 2);
  EXPECT_EQ(acc.pending(), 0);
  EXPECT_EQ(*acc.Offer(0, 7, Grad(1)), Outcome::kAccepted);
  EXPECT_EQ(*acc.Offer(1, 7, Grad(1)), Outcome::kStepComplete);
  EXPECT_EQ(acc.TakeAverage().dense.at("w")[0], 1.0f);  // the stale 100s never counted
}

TEST(SyncAccumulator, RefusesGradientsFromTheFuture) {
  SyncAccumulator acc({1, false}, 7);
  auto r = acc.Offer(0, 8, Grad(1));
  EXPECT_EQ(r.status().code(), Code::kAborted);
  EXPECT_NE(r.status().message().find("step 8"), std::string::npos);
}

TEST(SyncAccumulator, StrictModeCountsDistinctWorkers) {
  SyncAccumulator strict({2, true}, 0);
  EXPECT_EQ(*strict.Offer(0, 0, Grad(1)), Outcome::kAccepted);
  EXPECT_EQ(*strict.Offer(0, 0, Grad(5)), Outcome::kDuplicate);
  EXPECT_EQ(strict.duplicates_dropped(), 1);
  EXPECT_EQ(*strict.Offer(1, 0, Grad(3)), Outcome::kStepComplete);
  EXPECT_EQ(strict.TakeAverage().dense.at("w")[0], 2.0f);

  // TF's behaviour: one fast worker may fill the step alone.
  SyncAccumulator loose({2, false}, 0);
  EXPECT_EQ(*loose.Offer(0, 0, Grad(1)), Outcome::kAccepted);
  EXPECT_EQ(*loose.Offer(0, 0, Grad(5)), Outcome::kStepComplete);
  EXPECT_EQ(loose.TakeAverage().dense.at("w")[0], 3.0f);
}

TEST(SyncAccumulator, SumsInWorkerOrderWhateverTheArrivalOrder) {
  // 1e8 + 1 - 1e8 in float depends on the order of the sum.
  auto run = [](std::vector<int> order) {
    const float v[3] = {1e8f, 1.0f, -1e8f};
    SyncAccumulator acc({3, true}, 0);
    for (int w : order) (void)acc.Offer(w, 0, Grad(v[w]));
    return acc.TakeAverage().dense.at("w")[0];
  };
  const float expected = run({0, 1, 2});
  EXPECT_EQ(run({2, 1, 0}), expected);
  EXPECT_EQ(run({1, 2, 0}), expected);
}

TEST(SyncAccumulator, RejectsMismatchedGradients) {
  SyncAccumulator acc({2, false}, 0);
  ASSERT_EQ(*acc.Offer(0, 0, Grad(1)), Outcome::kAccepted);
  std::map<std::string, Tensor> other;
  other.emplace("w", Tensor({3}));
  EXPECT_EQ(acc.Offer(1, 0, std::move(other)).status().code(), Code::kInvalidArgument);
}

// Fewer live workers than R: a step needs the gradients of all that remain.
TEST(SyncAccumulator, FewerLiveWorkersThanRNeedFewerGradients) {
  SyncAccumulator acc({3, false}, 0);
  EXPECT_EQ(acc.required(), 3);
  EXPECT_EQ(*acc.Offer(0, 0, Grad(1)), Outcome::kAccepted);
  EXPECT_EQ(*acc.Offer(1, 0, Grad(3)), Outcome::kAccepted);
  // worker:2 finished: the two gradients held complete the step at once.
  EXPECT_TRUE(acc.SetLiveReplicas(2));
  EXPECT_EQ(acc.TakeAverage().dense.at("w")[0], 2.0f);
  EXPECT_EQ(acc.step(), 1);
  // worker:1 finished too: worker:0 alone completes each step.
  EXPECT_FALSE(acc.SetLiveReplicas(1));
  EXPECT_EQ(acc.required(), 1);
  EXPECT_EQ(*acc.Offer(0, 1, Grad(5)), Outcome::kStepComplete);
  EXPECT_EQ(acc.TakeAverage().dense.at("w")[0], 5.0f);
  // More live workers than R never raise the need above R.
  EXPECT_FALSE(acc.SetLiveReplicas(7));
  EXPECT_EQ(acc.required(), 3);
}

TEST(SyncAccumulator, NoLiveWorkerLeftCompletesWhatTheStepHolds) {
  SyncAccumulator acc({2, true}, 4);
  EXPECT_FALSE(acc.SetLiveReplicas(0)) << "nothing held: nothing to complete";
  acc.SetLiveReplicas(-1);
  EXPECT_EQ(*acc.Offer(1, 4, Grad(6)), Outcome::kAccepted);
  EXPECT_TRUE(acc.SetLiveReplicas(0));
  EXPECT_EQ(acc.TakeAverage().dense.at("w")[1], 12.0f);
  EXPECT_EQ(acc.step(), 5);
}

TEST(SyncAccumulator, StrictCountsDistinctLiveWorkers) {
  SyncAccumulator acc({2, true}, 0);
  acc.SetLiveReplicas(2);
  EXPECT_EQ(*acc.Offer(0, 0, Grad(1)), Outcome::kAccepted);
  EXPECT_EQ(*acc.Offer(0, 0, Grad(1)), Outcome::kDuplicate);
  EXPECT_TRUE(acc.SetLiveReplicas(1));  // worker:1 died: worker:0's one gradient is enough
}

SparseRows Rows(std::vector<int64_t> keys, const std::vector<float>& values) {
  SparseRows r;
  r.rows = Tensor({static_cast<int64_t>(keys.size()), 2}, values);
  r.keys = std::move(keys);
  return r;
}

// TF's SparseConditionalAccumulator: a row is the mean of the gradients
// that carry its key, not of all the step's gradients.
TEST(SyncAccumulator, AveragesEachEmbeddingRowOverTheGradientsThatCarryIt) {
  SyncAccumulator acc({3, false}, 0);
  // Arrival order 2, 0, 1; the sum runs in worker order 0, 1, 2.
  PS_ASSERT_OK(acc.Offer(2, 0, Grad(1), {{"emb", Rows({7, 9}, {1, 1, 30, 60})}}));
  PS_ASSERT_OK(acc.Offer(0, 0, Grad(1), {{"emb", Rows({9, 4}, {10, 20, 5, 5})}}));
  EXPECT_EQ(*acc.Offer(1, 0, Grad(1), {{"other", Rows({4}, {8, 8})}}), Outcome::kStepComplete);
  const SyncAccumulator::Average avg = acc.TakeAverage();
  ASSERT_EQ(avg.sparse.size(), 2u);
  const SparseRows& emb = avg.sparse.at("emb");
  EXPECT_EQ(emb.keys, (std::vector<int64_t>{9, 4, 7}));      // first seen in worker order
  const std::vector<float> expected = {20, 40, 5, 5, 1, 1};  // 9: (10+30)/2, (20+60)/2
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(emb.rows[i], expected[i]) << i;
  EXPECT_EQ(avg.sparse.at("other").keys, (std::vector<int64_t>{4}));
  EXPECT_EQ(avg.sparse.at("other").rows[0], 8.0f);
  EXPECT_EQ(avg.dense.at("w")[0], 1.0f);
}

}  // namespace
}  // namespace pstrain
