#include "ps/embedding/embedding_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include "cluster/key_partition.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

constexpr int kDim = 3;

proto::EmbeddingTableConfig Config(const std::string& name = "emb/embedding_weights") {
  proto::EmbeddingTableConfig c;
  c.set_name(name);
  c.set_dim(kDim);
  c.set_seed(11);
  c.set_num_shards(1);
  c.set_shard(0);
  return c;
}

proto::OptimizerConfig Opt(const std::string& name, float lr) {
  proto::OptimizerConfig o;
  o.set_name(name);
  o.set_learning_rate(lr);
  return o;
}

std::vector<float> Lookup(const EmbeddingTable& t, int64_t key) {
  std::vector<float> row(t.dim());
  t.Lookup({key}, row.data());
  return row;
}

SparseRows Grad(const std::vector<int64_t>& keys, const std::vector<float>& values) {
  SparseRows g;
  g.keys = keys;
  g.rows = Tensor({static_cast<int64_t>(keys.size()), kDim}, values);
  return g;
}

std::unique_ptr<EmbeddingTable> Make(const proto::EmbeddingTableConfig& c,
                                     const proto::OptimizerConfig& o, MemoryBudget* budget) {
  auto t = EmbeddingTable::Create(c, o, "ps:0", budget);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return t.ok() ? std::move(t).value() : nullptr;
}

// One element's state under a published rule: the variable and two slots.
struct Element {
  double var, s0 = 0, s1 = 0;
};
using Rule = std::function<void(Element*, double grad, int64_t t)>;

// Three pushes: {a}, {a, b} (b's row made), {b}. Each element of each row
// must follow `rule`, written here from the optimizer's published update;
// `untouched` (may be empty) is what a row without a gradient undergoes.
void CheckRule(const proto::OptimizerConfig& opt, double s0_init, const Rule& rule,
               const Rule& untouched) {
  MemoryBudget budget(1 << 30);
  auto table = Make(Config(), opt, &budget);
  ASSERT_NE(table, nullptr);
  const int64_t a = 17, b = -4;
  std::map<int64_t, std::vector<Element>> expected;
  auto start = [&](int64_t key) {
    for (float v : Lookup(*table, key)) expected[key].push_back({v, s0_init, 0});
  };
  start(a);
  const std::vector<SparseRows> pushes = {Grad({a}, {0.5f, -1.0f, 2.0f}),
                                          Grad({a, b}, {0.25f, 0.0f, -3.0f, 1.0f, 2.0f, -0.5f}),
                                          Grad({b}, {-0.75f, 0.125f, 4.0f})};
  for (size_t p = 0; p < pushes.size(); ++p) {
    const int64_t t = static_cast<int64_t>(p) + 1;
    for (size_t i = 0; i < pushes[p].keys.size(); ++i) {
      const int64_t key = pushes[p].keys[i];
      if (!expected.count(key)) start(key);
    }
    PS_ASSERT_OK(table->Apply(pushes[p], /*global_step=*/10));
    for (auto& [key, elements] : expected) {
      const auto& keys = pushes[p].keys;
      const auto at = std::find(keys.begin(), keys.end(), key);
      for (int j = 0; j < kDim; ++j) {
        if (at != keys.end()) {
          rule(&elements[j], pushes[p].rows[(at - keys.begin()) * kDim + j], t);
        } else if (untouched) {
          untouched(&elements[j], 0, t);
        }
      }
    }
    for (const auto& [key, elements] : expected) {
      const std::vector<float> row = Lookup(*table, key);
      for (int j = 0; j < kDim; ++j) {
        EXPECT_NEAR(row[j], elements[j].var, 1e-6 * std::max(1.0, std::fabs(elements[j].var)))
            << opt.name() << " push " << t << " key " << key << " element " << j;
      }
    }
  }
}

TEST(EmbeddingTableRules, GradientDescent) {
  CheckRule(
      Opt("GradientDescent", 0.1f), 0, [](Element* e, double g, int64_t) { e->var -= 0.1 * g; },
      nullptr);
}

TEST(EmbeddingTableRules, Momentum) {
  auto o = Opt("Momentum", 0.1f);
  o.set_momentum(0.9f);
  CheckRule(
      o, 0,
      [](Element* e, double g, int64_t) {
        e->s0 = 0.9 * e->s0 + g;
        e->var -= 0.1 * e->s0;
      },
      nullptr);
}

TEST(EmbeddingTableRules, AdagradAsSparseApplyAdagrad) {
  CheckRule(
      Opt("Adagrad", 0.1f), 0.1,
      [](Element* e, double g, int64_t) {
        e->s0 += g * g;
        e->var -= 0.1 * g / std::sqrt(e->s0);
      },
      nullptr);
}

TEST(EmbeddingTableRules, FtrlAsSparseApplyFtrlV2) {
  auto o = Opt("Ftrl", 0.2f);
  o.set_l1_regularization_strength(0.05f);
  o.set_l2_regularization_strength(0.3f);
  o.set_l2_shrinkage_regularization_strength(0.1f);
  o.set_learning_rate_power(-0.6f);
  CheckRule(
      o, 0.1,
      [](Element* e, double g, int64_t) {
        // McMahan et al.'s FTRL-Proximal as TF's ApplyFtrlV2 writes it:
        // accum in s0, linear in s1, p = -lr_power.
        const double lr = 0.2, l1 = 0.05, l2 = 0.3, shrink = 0.1, p = 0.6;
        const double g_shrunk = g + 2 * shrink * e->var;
        const double accum_new = e->s0 + g * g;
        const double sigma = (std::pow(accum_new, p) - std::pow(e->s0, p)) / lr;
        e->s1 += g_shrunk - sigma * e->var;
        const double quadratic = std::pow(accum_new, p) / lr + 2 * l2;
        e->var = std::fabs(e->s1) > l1 ? ((e->s1 > 0 ? l1 : -l1) - e->s1) / quadratic : 0.0;
        e->s0 = accum_new;
      },
      nullptr);
}

// Adam's step, Kingma and Ba with TF's epsilon-hat: t counts the table's
// pushes.
void AdamStep(Element* e, double g, int64_t t) {
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  e->s0 = b1 * e->s0 + (1 - b1) * g;
  e->s1 = b2 * e->s1 + (1 - b2) * g * g;
  const double lr_t = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
  e->var -= lr_t * e->s0 / (std::sqrt(e->s1) + eps);
}

TEST(EmbeddingTableRules, LazyAdamMovesOnlyTheRowsWithAGradient) {
  CheckRule(Opt("LazyAdam", 0.01f), 0, AdamStep, nullptr);
}

TEST(EmbeddingTableRules, AdamDecaysAndMovesEveryRowAsTfsSparseAdam) {
  CheckRule(Opt("Adam", 0.01f), 0, AdamStep, AdamStep);  // untouched: g = 0
}

// After a restore at step 1000 the next update is Adam's 1001st, as for a
// variable (and as TF's saved beta powers make it).
TEST(EmbeddingTableRules, AdamCountsOnFromTheStepItWasRestoredAt) {
  MemoryBudget budget(1 << 26);
  auto table = Make(Config(), Opt("LazyAdam", 0.01f), &budget);
  table->SetUpdateCount(1000);
  Element e{Lookup(*table, 4)[0]};
  PS_ASSERT_OK(table->Apply(Grad({4}, {0.5f, 0.5f, 0.5f}), 1000));
  AdamStep(&e, 0.5, 1001);
  EXPECT_NEAR(Lookup(*table, 4)[0], e.var, 1e-6);
  Element fresh{Lookup(*table, 5)[0]};
  AdamStep(&fresh, 0.5, 1);  // what t = 1 would give: not it
  PS_ASSERT_OK(table->Apply(Grad({5}, {0.5f, 0.5f, 0.5f}), 1001));
  EXPECT_GT(std::fabs(Lookup(*table, 5)[0] - fresh.var), 1e-4);
}

TEST(EmbeddingTable, AKeyWithoutARowLooksUpItsInitialValue) {
  MemoryBudget budget(1 << 26);
  auto table = Make(Config(), Opt("GradientDescent", 1), &budget);
  const std::vector<float> before = Lookup(*table, 5);
  EXPECT_EQ(table->stats().rows, 0);
  RowInitializer init("emb/embedding_weights", 11, kDim, DefaultEmbeddingStddev(kDim));
  std::vector<float> expected(kDim);
  init.Fill(5, expected.data());
  EXPECT_EQ(before, expected);
  PS_ASSERT_OK(table->Apply(Grad({5}, {1, 2, 3}), 1));
  EXPECT_EQ(table->stats().rows, 1);
  const std::vector<float> after = Lookup(*table, 5);
  for (int j = 0; j < kDim; ++j) EXPECT_FLOAT_EQ(after[j], before[j] - (j + 1));
}

TEST(EmbeddingTable, AKeyIsAdmittedAtItsMinCountthPush) {
  auto c = Config();
  c.set_min_count(3);
  MemoryBudget budget(1 << 26);
  auto table = Make(c, Opt("GradientDescent", 1), &budget);
  const std::vector<float> initial = Lookup(*table, 8);
  for (int push = 1; push <= 2; ++push) {
    PS_ASSERT_OK(table->Apply(Grad({8}, {1, 1, 1}), push));
    EXPECT_EQ(Lookup(*table, 8), initial) << "push " << push << " dropped";
    EXPECT_EQ(table->stats().rows, 0);
    EXPECT_EQ(table->stats().pending_keys, 1);
  }
  PS_ASSERT_OK(table->Apply(Grad({8}, {1, 1, 1}), 3));
  const EmbeddingTable::Stats s = table->stats();
  EXPECT_EQ(s.rows, 1);
  EXPECT_EQ(s.admitted, 1);
  EXPECT_EQ(s.pending_keys, 0);
  EXPECT_EQ(s.dropped_gradients, 2);
  for (int j = 0; j < kDim; ++j) EXPECT_FLOAT_EQ(Lookup(*table, 8)[j], initial[j] - 1);
}

TEST(EmbeddingTable, RowsUntouchedForTtlStepsExpireAndStartAgain) {
  auto c = Config();
  c.set_ttl_steps(10);
  MemoryBudget budget(1 << 26);
  auto table = Make(c, Opt("GradientDescent", 1), &budget);
  const std::vector<float> initial = Lookup(*table, 1);
  PS_ASSERT_OK(table->Apply(Grad({1}, {1, 1, 1}), 5));
  PS_ASSERT_OK(table->Apply(Grad({2}, {1, 1, 1}), 12));
  EXPECT_EQ(table->Expire(15), 0);  // 15 - 5 is not past 10
  EXPECT_EQ(table->Expire(16), 1);  // key 1's last gradient was at step 5
  EXPECT_EQ(table->stats().rows, 1);
  EXPECT_EQ(table->stats().expired, 1);
  EXPECT_EQ(Lookup(*table, 1), initial);
  EXPECT_EQ(table->DroppedKeys(), std::vector<int64_t>{1});  // for a delta checkpoint
  table->StartDeltas();
  EXPECT_TRUE(table->DroppedKeys().empty());
  const int64_t bytes = table->stats().bytes;
  PS_ASSERT_OK(table->Apply(Grad({1}, {2, 2, 2}), 16));  // reuses the freed row
  EXPECT_EQ(table->stats().bytes, bytes);
  for (int j = 0; j < kDim; ++j) EXPECT_FLOAT_EQ(Lookup(*table, 1)[j], initial[j] - 2);
}

TEST(EmbeddingTable, GrowthPastTheBudgetIsRefusedWithNothingChanged) {
  // The first push takes one block: 131,072 rows of 3 values and their
  // accumulators, 4.7 MB; a second does not fit.
  MemoryBudget budget(8 << 20);
  auto table = Make(Config("big/embedding_weights"), Opt("Adagrad", 0.1f), &budget);
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 100; ++k) keys.push_back(k);
  PS_ASSERT_OK(table->Apply(Grad(keys, std::vector<float>(keys.size() * kDim, 1)), 1));
  const uint64_t used = budget.used();
  const std::vector<float> row = Lookup(*table, 7);
  std::vector<int64_t> more;
  for (int64_t k = 1000; k < 201000; ++k) more.push_back(k);
  more.push_back(7);  // an existing row in the refused push
  const Status refused = table->Apply(Grad(more, std::vector<float>(more.size() * kDim, 1)), 2);
  EXPECT_EQ(refused.code(), Code::kResourceExhausted);
  EXPECT_NE(refused.message().find("embedding table big/embedding_weights on ps:0"),
            std::string::npos)
      << refused.ToString();
  EXPECT_EQ(budget.used(), used);
  EXPECT_EQ(table->stats().rows, 100);
  EXPECT_EQ(Lookup(*table, 7), row);
}

TEST(EmbeddingTable, ARowCostsItsValuesAndSlotsPlusAtMost32Bytes) {
  auto c = Config();
  c.set_dim(16);
  MemoryBudget budget(uint64_t{1} << 32);
  auto table = Make(c, Opt("Adagrad", 0.1f), &budget);
  const int64_t row_bytes = 16 * 2 * sizeof(float);
  // Rows come in blocks of 2 MiB (15,420 rows of 136 bytes here): past a
  // million rows, the last block's unused rows weigh little. Beside its
  // floats a row holds its key (8 bytes), its step (4) and at most 17.2
  // bytes of index.
  for (int64_t base = 0; base < 1200000; base += 16384) {
    SparseRows g;
    for (int64_t k = base; k < base + 16384; ++k) g.keys.push_back(k * 7919);
    g.rows = Tensor({16384, 16});
    PS_ASSERT_OK(table->Apply(g, 1));
    const EmbeddingTable::Stats s = table->stats();
    if (s.rows >= 1000000) {
      EXPECT_LE(static_cast<double>(s.bytes) / s.rows, row_bytes + 32) << s.rows << " rows";
    }
    EXPECT_EQ(static_cast<uint64_t>(s.bytes), budget.used());
  }
  table.reset();
  EXPECT_EQ(budget.used(), 0u);
}

TEST(EmbeddingTable, KeysOutsideTheVocabularyOrTheShardAreRefused) {
  auto c = Config();
  c.set_vocabulary_size(100);
  c.set_num_shards(2);
  c.set_shard(1);
  MemoryBudget budget(1 << 26);
  auto table = Make(c, Opt("GradientDescent", 1), &budget);
  int64_t mine = 0, theirs = 0;
  while (KeyShard(mine, 2) != 1) ++mine;
  while (KeyShard(theirs, 2) != 0) ++theirs;
  PS_EXPECT_OK(table->CheckKeys({mine}));
  const Status outside = table->CheckKeys({mine, 100});
  EXPECT_EQ(outside.code(), Code::kInvalidArgument);
  EXPECT_NE(outside.message().find("key 100 is outside its vocabulary [0, 100)"),
            std::string::npos);
  const Status other = table->CheckKeys({theirs});
  EXPECT_EQ(other.code(), Code::kInvalidArgument);
  EXPECT_NE(other.message().find("belongs to shard 0"), std::string::npos) << other.ToString();
}

TEST(EmbeddingTable, ABadConfigIsRefusedNamingTheTable) {
  MemoryBudget budget(1 << 26);
  auto c = Config("t");
  c.set_dim(0);
  auto bad = EmbeddingTable::Create(c, Opt("Adagrad", 0.1f), "ps:0", &budget);
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("embedding table t: dim 0"), std::string::npos);
  c = Config("t");
  c.set_shard(1);
  EXPECT_EQ(EmbeddingTable::Create(c, Opt("Adagrad", 0.1f), "ps:0", &budget).status().code(),
            Code::kInvalidArgument);
  c = Config("t");
  EXPECT_EQ(EmbeddingTable::Create(c, Opt("Sgd", 0.1f), "ps:0", &budget).status().code(),
            Code::kInvalidArgument);
  // A table's own optimizer wins over the ps's.
  *c.mutable_optimizer() = Opt("Ftrl", 0.1f);
  auto own = EmbeddingTable::Create(c, Opt("Adagrad", 0.1f), "ps:0", &budget);
  PS_ASSERT_OK(own);
  EXPECT_EQ((*own)->slot_names(), (std::vector<std::string>{"accumulator", "linear"}));
}

// Rows read out block by block and written into another table come back
// whole: values and slots; a delta read takes only rows changed since.
TEST(EmbeddingTable, RowsReadInBlocksWriteBackWholeAndDeltasTakeTheChanged) {
  MemoryBudget budget(1 << 26);
  auto table = Make(Config(), Opt("Adagrad", 0.1f), &budget);
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 3000; ++k) keys.push_back(k * 31 - 500);
  ASSERT_TRUE(
      table->Apply(Grad(keys, std::vector<float>(keys.size() * kDim, 0.5f)), /*step=*/4).ok());
  table->StartDeltas();  // a full checkpoint
  ASSERT_TRUE(
      table->Apply(Grad({keys[7], keys[2999]}, std::vector<float>(2 * kDim, 1.0f)), 9).ok());
  ASSERT_EQ(table->row_floats(), 2 * kDim);
  EmbeddingTable::RowBlock all, changed;
  int blocks = 0;
  for (int64_t next = 0; next < table->row_end(); ++blocks) {
    next = table->ReadRows(next, 1000, false, &all);
  }
  EXPECT_EQ(blocks, 3);
  EXPECT_EQ(all.keys.size(), keys.size());
  for (int64_t next = 0; next < table->row_end();) {
    next = table->ReadRows(next, 700, true, &changed);
  }
  EXPECT_EQ(changed.keys, (std::vector<int64_t>{keys[7], keys[2999]}));

  auto copy = Make(Config(), Opt("Adagrad", 0.1f), &budget);
  PS_ASSERT_OK(copy->WriteRows(all, 9));
  EXPECT_EQ(copy->stats().rows, 3000);
  for (int64_t key : {keys[0], keys[7], keys[2999]})
    EXPECT_EQ(Lookup(*copy, key), Lookup(*table, key));
  // The slots came too: one more identical push moves both alike.
  PS_ASSERT_OK(table->Apply(Grad({keys[7]}, {1, 2, 3}), 10));
  PS_ASSERT_OK(copy->Apply(Grad({keys[7]}, {1, 2, 3}), 10));
  EXPECT_EQ(Lookup(*copy, keys[7]), Lookup(*table, keys[7]));

  EXPECT_EQ(copy->EraseRows({keys[0], 123456789}), 1);
  EXPECT_EQ(copy->stats().rows, 2999);
  EXPECT_NE(Lookup(*copy, keys[0]), Lookup(*table, keys[0]));  // its initial value again

  EmbeddingTable::RowBlock bad;
  bad.keys = {1};
  bad.values = {1, 2};
  EXPECT_EQ(copy->WriteRows(bad, 1).code(), Code::kInvalidArgument);
}

TEST(EmbeddingTable, APlanAnotherUpdateOvertookIsRefusedWithNothingChanged) {
  MemoryBudget budget(UINT64_MAX);
  auto t = Make(Config(), Opt("GradientDescent", 1.0f), &budget);
  const SparseRows first = Grad({1, 2}, {1, 1, 1, 1, 1, 1});
  const EmbeddingTable::Plan plan = t->PlanApply(first);
  ASSERT_TRUE(t->Reserve(plan));
  // Another update makes key 2's row between the plan and its application:
  // the plan's rows (key 2 absent) no longer say what the table holds.
  PS_ASSERT_OK(t->Apply(Grad({2}, {5, 5, 5}), 0));
  const std::vector<float> row2 = Lookup(*t, 2);
  const uint64_t held = budget.used();
  PS_EXPECT_CODE(t->ApplyPlanned(first, plan, 0), Code::kAborted);
  EXPECT_EQ(t->stats().rows, 1) << "the overtaken plan made a row";
  EXPECT_EQ(Lookup(*t, 2), row2) << "the overtaken plan moved a row";
  EXPECT_EQ(budget.used(), held - plan.bytes) << "the plan's reservation was not given back";
  // Planned again, it applies.
  const EmbeddingTable::Plan again = t->PlanApply(first);
  ASSERT_TRUE(t->Reserve(again));
  PS_EXPECT_OK(t->ApplyPlanned(first, again, 1));
  EXPECT_EQ(t->stats().rows, 2);
}

}  // namespace
}  // namespace pstrain
