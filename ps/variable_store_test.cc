#include "ps/variable_store.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/testing/fake_clock.h"
#include "core/testing/status_assertions.h"

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
  PS_ASSERT_OK(store.Initialize(opts, Sgd(1.0f), std::move(init)));

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
  PS_ASSERT_OK(w);
  for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ((*w)[0].second[i], 1600.0f);
  EXPECT_EQ(store.global_step(), 1600);
}

// A pull holds the variable's value itself; an update while it does writes a
// new copy, and one while nobody does writes in place.
TEST(VariableStore, UpdatesCopyOnlyWhatAReaderHolds) {
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({4}, {1, 2, 3, 4}));
  PS_ASSERT_OK(store.Initialize({}, Sgd(1.0f), std::move(init)));
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({4}, {1, 1, 1, 1}));

  auto held = store.ReadShared({"w"});
  PS_ASSERT_OK(held);
  const VariableStore::SharedTensor before = (*held)[0].second;
  held->clear();
  PS_ASSERT_OK(store.ApplyGradients(g, false));
  EXPECT_EQ((*before)[0], 1.0f) << "an update changed a value a reader holds";
  EXPECT_EQ((*before)[3], 4.0f);
  auto after = store.ReadShared({"w"});
  PS_ASSERT_OK(after);
  EXPECT_NE((*after)[0].second.get(), before.get());
  EXPECT_EQ((*(*after)[0].second)[0], 0.0f);

  const float* storage = (*after)[0].second->data();
  after->clear();  // no reader left: the next update writes in place
  PS_ASSERT_OK(store.ApplyGradients(g, false));
  auto last = store.ReadShared({"w"});
  PS_ASSERT_OK(last);
  EXPECT_EQ((*last)[0].second->data(), storage);
  EXPECT_EQ((*(*last)[0].second)[3], 2.0f);
}

// A variable big enough to be updated in two halves on two threads gets,
// element for element, Nesterov momentum's published rule (accum = m *
// accum + g; var -= lr * (g + m * accum)), its slot included, on both
// sides of the split.
TEST(VariableStore, ABigVariableIsUpdatedInHalvesExactlyAsElementByElement) {
  constexpr int64_t n = (int64_t{1} << 21) + 3;  // two halves, one odd
  constexpr float lr = 0.5f, m = 0.9f;
  Tensor w0({n}), g({n});
  for (int64_t i = 0; i < n; ++i) {
    w0[i] = static_cast<float>(i % 1000) * 0.001f;
    g[i] = static_cast<float>((i * 7) % 13) - 6.0f;
  }
  proto::OptimizerConfig c;
  c.set_name("Momentum");
  c.set_learning_rate(lr);
  c.set_momentum(m);
  c.set_use_nesterov(true);
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("w", w0);
  PS_ASSERT_OK(store.Initialize({}, std::move(Optimizer::Create(c)).value(), std::move(init)));
  std::map<std::string, Tensor> push;
  push.emplace("w", g);
  for (int step = 0; step < 2; ++step) ASSERT_TRUE(store.ApplyGradients(push, false).ok());
  auto state = store.ReadState();
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  std::map<std::string, const Tensor*> by_name;
  for (const auto& [name, t] : *state) by_name[name] = &t;
  ASSERT_TRUE(by_name.count("w") && by_name.count("w/Momentum"));
  const Tensor& w = *by_name["w"];
  const Tensor& accum = *by_name["w/Momentum"];
  for (int64_t i : {int64_t{0}, n / 2 - 1, n / 2, n / 2 + 1, n - 1, int64_t{12345}, n - 54321}) {
    float v = w0[i], a = 0;
    for (int step = 0; step < 2; ++step) {
      a = m * a + g[i];
      v -= lr * (g[i] + m * a);
    }
    EXPECT_FLOAT_EQ(accum[i], a) << i;
    EXPECT_FLOAT_EQ(w[i], v) << i;
  }
}

TEST(VariableStore, RejectsWholePushWhenOneGradientIsWrong) {
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("a", Tensor({2}, {1, 1}));
  init.emplace("b", Tensor({2}, {1, 1}));
  PS_ASSERT_OK(store.Initialize({}, Sgd(1.0f), std::move(init)));
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
  EXPECT_EQ(store.CheckPlacement(7).code(), Code::kUnavailable);
  VariableStore::InitOptions opts;
  opts.placement_fingerprint = 7;
  PS_ASSERT_OK(store.Initialize(opts, Sgd(1.0f), {}));
  PS_EXPECT_OK(store.CheckPlacement(7));
  Status s = store.CheckPlacement(8);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("placement mismatch"), std::string::npos);
}

}  // namespace
}  // namespace pstrain

namespace pstrain {
namespace {

std::unique_ptr<Optimizer> MomentumOpt() {
  proto::OptimizerConfig c;
  c.set_name("Momentum");
  c.set_learning_rate(1.0f);
  c.set_momentum(0.5f);
  return std::move(Optimizer::Create(c)).value();
}

// TF's ExponentialMovingAverage with num_updates = global_step, by hand:
// GD lr 1, gradient 1 twice, ema_decay 0.9.
//   step 1: n = 1, decay = min(0.9, 2/11);  var -1, shadow 0 - (9/11)(0 + 1) = -9/11
//   step 2: n = 2, decay = min(0.9, 3/12);  var -2, shadow -9/11 - 0.75(-9/11 + 2)
TEST(VariableStore, MovingAverageFollowsTfDecay) {
  VariableStore store;
  VariableStore::InitOptions opts;
  opts.holds_global_step = true;
  opts.ema_decay = 0.9f;
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1}));
  PS_ASSERT_OK(store.Initialize(opts, Sgd(1.0f), std::move(init)));
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({1}, {1.0f}));
  PS_ASSERT_OK(store.ApplyGradients(g, true));
  PS_ASSERT_OK(store.ApplyGradients(g, true));
  auto state = store.ReadState();
  PS_ASSERT_OK(state);
  ASSERT_EQ(state->size(), 2u);
  EXPECT_EQ((*state)[1].first, "w/ExponentialMovingAverage");
  const float s1 = -9.0f / 11.0f;
  EXPECT_NEAR((*state)[1].second[0], s1 - 0.75f * (s1 + 2.0f), 1e-6);
  EXPECT_EQ((*state)[0].second[0], -2.0f);
}

TEST(VariableStore, StateRoundTripsThroughInitialize) {
  VariableStore a;
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({2}, {1, 2}));
  PS_ASSERT_OK(a.Initialize({}, MomentumOpt(), std::move(init)));
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({2}, {1, 1}));
  PS_ASSERT_OK(a.ApplyGradients(g, false));
  auto saved = a.ReadState();
  PS_ASSERT_OK(saved);
  ASSERT_EQ((*saved)[1].first, "w/Momentum");

  VariableStore b;
  std::map<std::string, Tensor> values, state;
  values.emplace("w", (*saved)[0].second);
  state.emplace("w/Momentum", (*saved)[1].second);
  PS_ASSERT_OK(b.Initialize({}, MomentumOpt(), std::move(values), std::move(state)));
  PS_ASSERT_OK(a.ApplyGradients(g, false));
  PS_ASSERT_OK(b.ApplyGradients(g, false));
  // The second step uses the restored accumulator: both stores agree.
  EXPECT_EQ((*a.Read({"w"}))[0].second[0], (*b.Read({"w"}))[0].second[0]);
  EXPECT_EQ((*b.Read({"w"}))[0].second[0], 1.0f - 1.0f - 1.5f);

  VariableStore c;
  std::map<std::string, Tensor> v2, stray;
  v2.emplace("w", Tensor({2}));
  stray.emplace("x/Momentum", Tensor({2}));
  Status s = c.Initialize({}, MomentumOpt(), std::move(v2), std::move(stray));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("x/Momentum"), std::string::npos);
}

}  // namespace
}  // namespace pstrain

namespace pstrain {
namespace {

std::map<std::string, Tensor> Values(float w, std::vector<float> moving) {
  std::map<std::string, Tensor> v;
  v.emplace("w", Tensor({1}, {w}));
  v.emplace("bn/moving_mean", Tensor({static_cast<int64_t>(moving.size())}, moving));
  return v;
}

// A non-trainable variable takes var -= delta: no optimizer (Momentum would
// accumulate), no slot, no moving-average shadow; the trainable one beside it
// trains as before.
TEST(VariableStore, NonTrainableIsAssignSubAsync) {
  VariableStore store;
  VariableStore::InitOptions opts;
  opts.holds_global_step = true;
  opts.ema_decay = 0.9f;
  opts.non_trainable = {"bn/moving_mean"};
  PS_ASSERT_OK(store.Initialize(opts, MomentumOpt(), Values(0, {1, 2})));
  std::map<std::string, Tensor> push = Values(1, {0.25f, -0.5f});
  PS_ASSERT_OK(store.ApplyGradients(push, true));
  PS_ASSERT_OK(store.ApplyGradients(push, true));
  auto state = store.ReadState();
  PS_ASSERT_OK(state);
  std::map<std::string, Tensor> got(state->begin(), state->end());
  ASSERT_EQ(got.size(), 4u);  // w, its Momentum slot and shadow; the moving mean alone
  EXPECT_EQ(got.count("bn/moving_mean/Momentum"), 0u);
  EXPECT_EQ(got.count("bn/moving_mean/ExponentialMovingAverage"), 0u);
  EXPECT_FLOAT_EQ(got.at("bn/moving_mean")[0], 1.0f - 2 * 0.25f);
  EXPECT_FLOAT_EQ(got.at("bn/moving_mean")[1], 2.0f + 2 * 0.5f);
  EXPECT_FLOAT_EQ(got.at("w")[0], -1.0f - 1.5f);  // momentum 0.5, lr 1
  EXPECT_EQ(store.global_step(), 2);
}

// ps:0's options for sync replicas averaging `r` gradients a step.
VariableStore::InitOptions SyncOptions(int r) {
  VariableStore::InitOptions opts;
  opts.holds_global_step = true;
  opts.sync.set_enabled(true);
  opts.sync.set_replicas_to_aggregate(r);
  return opts;
}

// Sync: the step's deltas are averaged, then subtracted once.
TEST(VariableStore, NonTrainableIsAssignSubOfTheAverageSync) {
  VariableStore store;
  VariableStore::InitOptions opts = SyncOptions(2);
  opts.non_trainable = {"bn/moving_mean"};
  PS_ASSERT_OK(store.Initialize(opts, MomentumOpt(), Values(0, {1, 2})));
  auto first = store.OfferSyncGradients(0, 0, Values(1, {0.2f, 0.0f}));
  PS_ASSERT_OK(first);
  EXPECT_EQ(first->outcome, proto::ACCEPTED);
  auto second = store.OfferSyncGradients(1, 0, Values(3, {0.4f, -1.0f}));
  PS_ASSERT_OK(second);
  EXPECT_EQ(second->outcome, proto::STEP_COMPLETE);
  auto mm = store.Read({"bn/moving_mean", "w"});
  PS_ASSERT_OK(mm);
  EXPECT_FLOAT_EQ((*mm)[0].second[0], 1.0f - 0.3f);
  EXPECT_FLOAT_EQ((*mm)[0].second[1], 2.0f + 0.5f);
  EXPECT_FLOAT_EQ((*mm)[1].second[0], -2.0f);  // the average gradient 2, lr 1
}

TEST(VariableStore, NonTrainableNamesMustBeVariablesAndHaveNoSlots) {
  VariableStore store;
  VariableStore::InitOptions opts;
  opts.non_trainable = {"bn/moving_variance"};
  Status s = store.Initialize(opts, MomentumOpt(), Values(0, {1}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("bn/moving_variance"), std::string::npos);

  opts.non_trainable = {"bn/moving_mean"};
  std::map<std::string, Tensor> slot;
  slot.emplace("bn/moving_mean/Momentum", Tensor({1}));
  s = store.Initialize(opts, MomentumOpt(), Values(0, {1}), std::move(slot));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
}

// The chief says fewer workers can push: a step that already holds enough
// is applied at once, and waiters for the next step wake.
TEST(VariableStore, FewerLiveWorkersCompleteTheHeldStep) {
  VariableStore store;
  VariableStore::InitOptions opts = SyncOptions(2);
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1}, {1}));
  PS_ASSERT_OK(store.Initialize(opts, Sgd(1.0f), std::move(init)));
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({1}, {0.25f}));
  ASSERT_EQ(store.OfferSyncGradients(0, 0, g)->outcome, proto::ACCEPTED);
  Status waited;
  std::thread waiter([&] { waited = store.WaitForStep(1, std::chrono::seconds(30), nullptr); });
  auto step = store.SetLiveReplicas(1);
  waiter.join();
  PS_ASSERT_OK(step);
  EXPECT_EQ(*step, 1);
  EXPECT_TRUE(waited.ok()) << waited.ToString();
  EXPECT_FLOAT_EQ((*store.Read({"w"}))[0].second[0], 0.75f);
  EXPECT_EQ(store.sync_stats().required, 1);
  // A restore keeps the live count.
  std::map<std::string, Tensor> again;
  again.emplace("w", Tensor({1}, {1}));
  PS_ASSERT_OK(store.Initialize(opts, Sgd(1.0f), std::move(again)));
  EXPECT_EQ(store.sync_stats().required, 1);
  EXPECT_EQ(store.OfferSyncGradients(0, 0, g)->outcome, proto::STEP_COMPLETE);
}

// A wait for a sync step that never comes ends exactly at its timeout on
// the store's clock, saying what the step lacks; a step that comes ends it
// at once.
TEST(VariableStore, AWaitForAStepEndsAtItsTimeoutOnTheStoresClock) {
  FakeClock clock;
  VariableStore store(UINT64_MAX, &clock);
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1}, {1}));
  PS_ASSERT_OK(store.Initialize(SyncOptions(2), Sgd(1.0f), std::move(init)));
  Status waited = Aborted("not waited");
  std::thread waiter([&] { waited = store.WaitForStep(1, std::chrono::seconds(10), nullptr); });
  ASSERT_TRUE(clock.AwaitSleepers(1));
  clock.Advance(std::chrono::milliseconds(9900));
  ASSERT_TRUE(clock.AwaitSleepers(1));  // still waiting, 100 ms before its timeout
  clock.Advance(std::chrono::milliseconds(100));
  waiter.join();
  EXPECT_EQ(waited.code(), Code::kDeadlineExceeded) << waited.ToString();
  EXPECT_NE(waited.message().find("still waiting for step 1 (0 of 2 gradients"), std::string::npos)
      << waited.message();

  std::thread second([&] { waited = store.WaitForStep(1, std::chrono::seconds(10), nullptr); });
  ASSERT_TRUE(clock.AwaitSleepers(1));
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({1}, {0.5f}));
  ASSERT_EQ(store.OfferSyncGradients(0, 0, g)->outcome, proto::ACCEPTED);
  ASSERT_EQ(store.OfferSyncGradients(1, 0, g)->outcome, proto::STEP_COMPLETE);
  second.join();  // no time passed
  EXPECT_TRUE(waited.ok()) << waited.ToString();
}

TEST(VariableStore, LiveWorkersAreForSyncOnly) {
  VariableStore store;
  PS_ASSERT_OK(store.Initialize({}, Sgd(1.0f), {}));
  EXPECT_EQ(store.SetLiveReplicas(1).status().code(), Code::kFailedPrecondition);
}

// A store with dense "w" and a table "emb" of dim 4 trained by SGD at 1.
VariableStore::InitOptions WithTable(int64_t ttl_steps = 0) {
  VariableStore::InitOptions opts;
  opts.holds_global_step = true;
  opts.ps_name = "ps:3";
  opts.optimizer_config.set_name("GradientDescent");
  opts.optimizer_config.set_learning_rate(1.0f);
  proto::EmbeddingTableConfig t;
  t.set_name("emb");
  t.set_dim(4);
  t.set_num_shards(1);
  t.set_ttl_steps(ttl_steps);
  opts.tables.push_back(t);
  return opts;
}

std::map<std::string, SparseRows> Rows(std::vector<int64_t> keys) {
  std::map<std::string, SparseRows> sparse;
  sparse["emb"].rows = Tensor({static_cast<int64_t>(keys.size()), 4});
  sparse["emb"].rows.Fill(1.0f);
  sparse["emb"].keys = std::move(keys);
  return sparse;
}

// The variables and the rows share --max_memory_bytes; a push whose rows
// do not fit applies nothing, its variables' gradients neither.
TEST(VariableStore, APushWhoseRowsDoNotFitAppliesNothing) {
  // Room for the variable and one block of rows (131,072 of 4 floats).
  VariableStore store(/*max_bytes=*/6 << 20);
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1000}));  // 4000 bytes with no slots
  PS_ASSERT_OK(store.Initialize(WithTable(), Sgd(1.0f), std::move(init)));
  std::map<std::string, Tensor> g;
  g.emplace("w", Tensor({1000}));
  g.at("w").Fill(1.0f);
  PS_ASSERT_OK(store.ApplyGradients(g, true, 0, Rows({1, 2, 3})));
  std::vector<int64_t> many;
  for (int64_t k = 100; k < 140000; ++k) many.push_back(k);
  auto refused = store.ApplyGradients(g, true, 0, Rows(many));
  EXPECT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("embedding table emb on ps:3"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(store.global_step(), 1);
  EXPECT_EQ((*store.Read({"w"}))[0].second[0], -1.0f);
  EXPECT_EQ(store.table_stats().at(0).stats.rows, 3);
}

TEST(VariableStore, RowsExpireAsTheStepAdvances) {
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1}));
  PS_ASSERT_OK(store.Initialize(WithTable(/*ttl_steps=*/8), Sgd(1.0f), std::move(init)));
  std::map<std::string, Tensor> none;
  PS_ASSERT_OK(store.ApplyGradients(none, true, 0, Rows({1})));  // key 1 at step 0
  int64_t steps = 0;
  while (store.table_stats().at(0).stats.expired == 0 && steps < 100) {
    PS_ASSERT_OK(store.ApplyGradients(none, true, 0, Rows({2})));
    ++steps;
  }
  // Swept every ttl/8 = 1 step: key 1 goes at the first step past 8.
  EXPECT_EQ(store.global_step(), 10);
  const auto stats = store.table_stats().at(0).stats;
  EXPECT_EQ(stats.rows, 1);
  EXPECT_EQ(stats.expired, 1);
}

TEST(VariableStore, ATableNamedAsAVariableIsRefused) {
  VariableStore store;
  std::map<std::string, Tensor> init;
  init.emplace("emb", Tensor({1}));
  const Status s = store.Initialize(WithTable(), Sgd(1.0f), std::move(init));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_FALSE(store.ready());
}

// Sync replicas, strict, 2 of 3 workers (a backup): rows of a stale push
// and of a worker's second push for the step are dropped whole, and a row
// is averaged over the counted gradients that carry its key.
TEST(VariableStore, SyncDropsStaleAndDuplicateRowsWhole) {
  VariableStore store;
  VariableStore::InitOptions opts = WithTable();
  opts.sync.set_enabled(true);
  opts.sync.set_replicas_to_aggregate(2);
  opts.sync.set_total_num_replicas(3);
  opts.sync.set_strict(true);
  std::map<std::string, Tensor> init;
  init.emplace("w", Tensor({1}));
  PS_ASSERT_OK(store.Initialize(opts, Sgd(1.0f), std::move(init)));
  auto grads = [] {
    std::map<std::string, Tensor> g;
    g.emplace("w", Tensor({1}));
    return g;
  };
  auto rows = [](std::vector<int64_t> keys, float value) {
    std::map<std::string, SparseRows> sparse = Rows(std::move(keys));
    sparse["emb"].rows.Fill(value);
    return sparse;
  };
  auto row = [&](int64_t key) {
    auto r = store.ReadRows("emb", {key});
    PS_EXPECT_OK(r);
    return (*r)[0];
  };
  const float one = row(1), two = row(2), three = row(3);
  EXPECT_EQ(store.OfferSyncGradients(0, 0, grads(), rows({1, 2}, 1.0f))->outcome, proto::ACCEPTED);
  EXPECT_EQ(store.OfferSyncGradients(0, 0, grads(), rows({1, 3}, 100.0f))->outcome,
            proto::DUPLICATE);
  EXPECT_EQ(store.OfferSyncGradients(2, 0, grads(), rows({2}, 3.0f))->outcome,
            proto::STEP_COMPLETE);
  // Worker 1, the backup, comes late: its gradient is stale.
  EXPECT_EQ(store.OfferSyncGradients(1, 0, grads(), rows({3}, 50.0f))->outcome, proto::STALE);
  EXPECT_EQ(store.global_step(), 1);
  EXPECT_FLOAT_EQ(row(1), one - 1.0f);               // carried by worker 0 alone
  EXPECT_FLOAT_EQ(row(2), two - (1.0f + 3.0f) / 2);  // by both
  EXPECT_FLOAT_EQ(row(3), three);                    // only in dropped pushes
  EXPECT_EQ(store.sync_stats().duplicates_dropped, 1);
  EXPECT_EQ(store.sync_stats().stale_dropped, 1);
}

}  // namespace
}  // namespace pstrain
