#include "ps/embedding/embedding_tables.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

constexpr int kDim = 4;

proto::EmbeddingTableConfig Config(const std::string& name) {
  proto::EmbeddingTableConfig c;
  c.set_name(name);
  c.set_dim(kDim);
  c.set_seed(3);
  c.set_num_shards(1);
  c.set_shard(0);
  return c;
}

std::unique_ptr<EmbeddingTables> Make(MemoryBudget* budget) {
  proto::OptimizerConfig o;
  o.set_name("GradientDescent");
  o.set_learning_rate(1.0f);
  auto tables = EmbeddingTables::Make({Config("a"), Config("b")}, o, "ps:0", budget, 0,
                                      [](const std::string&) { return false; });
  EXPECT_TRUE(tables.ok()) << tables.status().ToString();
  return tables.ok() ? std::move(tables).value() : nullptr;
}

SparseRows Ones(const std::vector<int64_t>& keys) {
  SparseRows g;
  g.keys = keys;
  g.rows = Tensor({static_cast<int64_t>(keys.size()), kDim});
  g.rows.Fill(1.0f);
  return g;
}

TEST(EmbeddingTables, PushesFromManyThreadsEachApplyOnceToEveryTable) {
  MemoryBudget budget(UINT64_MAX);
  auto tables = Make(&budget);
  ASSERT_NE(tables, nullptr);
  constexpr int kThreads = 4;
  constexpr int kPushes = 200;
  std::vector<float> start(kDim);
  PS_ASSERT_OK(tables->Find("a").status());
  (*tables->Find("a"))->Lookup({0}, start.data());
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int p = 0; p < kPushes; ++p) {
        // Key 0 in every push; a new key of this thread's in each, so that
        // plans that make rows race with each other.
        const int64_t own = 1 + t * kPushes + p;
        PS_EXPECT_OK(tables->Apply({{"a", Ones({0, own})}, {"b", Ones({own})}}, p));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<float> row(kDim);
  (*tables->Find("a"))->Lookup({0}, row.data());
  for (int i = 0; i < kDim; ++i) {
    EXPECT_FLOAT_EQ(row[i], start[i] - kThreads * kPushes) << "an update of key 0 was lost";
  }
  for (const EmbeddingTables::TableStats& t : tables->stats()) {
    EXPECT_EQ(t.stats.rows, t.name == "a" ? 1 + kThreads * kPushes : kThreads * kPushes) << t.name;
  }
  EXPECT_EQ(budget.used(), static_cast<uint64_t>(tables->bytes()));
}

TEST(EmbeddingTables, APushOneOfWhoseTablesDoesNotFitChangesNoTable) {
  MemoryBudget sizing(UINT64_MAX);
  uint64_t empty_bytes = 0;
  {
    auto tables = Make(&sizing);
    empty_bytes = sizing.used();
  }
  // Room for what the empty tables hold and one block of rows, not two.
  auto probe = Make(&sizing);
  PS_ASSERT_OK(probe->Apply({{"a", Ones({1})}}, 0));
  const uint64_t one_block = sizing.used() - empty_bytes;
  MemoryBudget budget(empty_bytes + one_block + one_block / 2);
  auto tables = Make(&budget);
  const uint64_t before = budget.used();
  PS_EXPECT_CODE(tables->Apply({{"a", Ones({1})}, {"b", Ones({2})}}, 0), Code::kResourceExhausted);
  for (const EmbeddingTables::TableStats& t : tables->stats()) EXPECT_EQ(t.stats.rows, 0) << t.name;
  EXPECT_EQ(budget.used(), before) << "a refused push kept a reservation";
  PS_EXPECT_CODE(tables->CheckFits({{"a", Ones({1})}, {"b", Ones({2})}}), Code::kResourceExhausted);
  PS_EXPECT_OK(tables->CheckFits({{"a", Ones({1})}}));
  EXPECT_EQ(budget.used(), before) << "CheckFits kept a reservation";
  // A completed sync step cannot be refused: the table that fits is applied.
  tables->ApplyFitting({{"a", Ones({1})}, {"b", Ones({2})}}, 0);
  EXPECT_EQ(tables->rows_refused(), 1);
  int64_t rows = 0;
  for (const EmbeddingTables::TableStats& t : tables->stats()) rows += t.stats.rows;
  EXPECT_EQ(rows, 1);
}

TEST(EmbeddingTables, RowsForAnUnknownTableOrOfAnotherShapeAreRefused) {
  MemoryBudget budget(UINT64_MAX);
  auto tables = Make(&budget);
  PS_EXPECT_CODE(tables->Check({{"c", Ones({1})}}), Code::kNotFound);
  SparseRows wrong = Ones({1, 2});
  wrong.rows = Tensor({2, kDim + 1});
  PS_EXPECT_CODE(tables->Check({{"a", wrong}}), Code::kInvalidArgument);
  proto::OptimizerConfig o;
  o.set_name("GradientDescent");
  o.set_learning_rate(1.0f);
  PS_EXPECT_CODE(EmbeddingTables::Make({Config("a")}, o, "ps:0", &budget, 0,
                                       [](const std::string& name) { return name == "a"; })
                     .status(),
                 Code::kInvalidArgument);
}

}  // namespace
}  // namespace pstrain
