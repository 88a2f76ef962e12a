// PsFleet over in-process ps tasks (ps/testing/in_process_ps.h): shards stitched on
// pull and cut on push, global_step kept by ps 0, state pulled with slots,
// and a push for another placement refused without changing anything. The
// same fleet over gRPC and real processes: tests/integration/.
#include "ps/client/ps_fleet.h"

#include <gtest/gtest.h>

#include "cluster/key_partition.h"
#include "core/testing/status_assertions.h"
#include "ps/embedding/embedding_table.h"
#include "ps/testing/in_process_ps.h"

namespace pstrain {
namespace {

class PsFleetInProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    auto placement =
        cluster::ComputePlacement(vars_, 2, cluster::PlacementStrategy::kGreedy, 16 << 10);
    ASSERT_TRUE(placement.ok()) << placement.status().ToString();
    ASSERT_EQ(placement->ShardsOfVariable("a").size(), 2u);  // cut by the 16 KB slice limit
    std::vector<std::unique_ptr<PsConnection>> ps;
    for (int i = 0; i < 2; ++i) {
      auto one = std::make_unique<InProcessPs>(i);
      ps_[i] = one.get();
      ps.push_back(std::move(one));
    }
    fleet_ = std::make_unique<PsFleet>(std::move(ps), vars_, *placement);

    std::vector<Tensor> init = {Tensor({1000, 10}), Tensor({7})};
    for (int64_t i = 0; i < init[0].size(); ++i) init[0][i] = static_cast<float>(i);
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("Momentum");
    header.mutable_optimizer()->set_learning_rate(0.5f);
    header.mutable_optimizer()->set_momentum(0.5f);
    header.set_num_workers(2);
    PS_ASSERT_OK(fleet_->InitVariables(init, header));
  }

  const std::vector<cluster::VariableInfo> vars_ = {{"a", {1000, 10}, 1}, {"b", {7}, 1}};
  InProcessPs* ps_[2] = {nullptr, nullptr};
  std::unique_ptr<PsFleet> fleet_;
};

TEST_F(PsFleetInProcess, PushesLandOnEveryShardAndPs0CountsTheSteps) {
  std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7})};
  grads[0].Fill(1.0f);
  grads[1].Fill(2.0f);
  const PsFleet::PsSteps pulled = {0, 0};
  for (int i = 0; i < 2; ++i) {
    auto pushed = fleet_->PushGradients(grads, /*worker=*/i, i + 1, pulled, /*sync=*/false);
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  }
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 2);
  // Momentum 0.5, lr 0.5: accum 1 then 1.5 (times g); var -= 0.5 * accum.
  for (int64_t i = 0; i < values[0].size(); ++i) {
    ASSERT_EQ(values[0][i], static_cast<float>(i) - 0.5f * (1.0f + 1.5f)) << i;
  }
  for (int64_t i = 0; i < 7; ++i) ASSERT_EQ(values[1][i], -0.5f * 2.0f * (1.0f + 1.5f));

  PsFleet::State state;
  PS_ASSERT_OK(fleet_->PullState(&state, &steps));
  ASSERT_TRUE(state.count("a/Momentum"));
  EXPECT_EQ(state["a/Momentum"].shape(), (Shape{1000, 10}));
  EXPECT_EQ(state["a/Momentum"][999], 1.5f);
  EXPECT_EQ(state["b/Momentum"][0], 3.0f);
}

TEST_F(PsFleetInProcess, PushForAnotherPlacementIsRefusedAndChangesNothing) {
  auto other = cluster::ComputePlacement(vars_, 2, cluster::PlacementStrategy::kGreedy, 1 << 30);
  PS_ASSERT_OK(other);
  ASSERT_NE(other->fingerprint, fleet_->placement().fingerprint);
  proto::PushHeader header;
  header.set_placement_fingerprint(other->fingerprint);
  header.set_num_tensors(1);
  Tensor g({7});
  g.Fill(1.0f);
  auto pushed = ps_[0]->Push(header, {{"b", &g}});
  EXPECT_EQ(pushed.status().code(), Code::kFailedPrecondition) << pushed.status().ToString();
  EXPECT_NE(pushed.status().message().find("ps:0 (in process): Push"), std::string::npos);

  std::vector<Tensor> values;
  PS_ASSERT_OK(fleet_->PullVariables(&values, nullptr));
  EXPECT_EQ(values[1][0], 0.0f);
}

TEST_F(PsFleetInProcess, ShutdownReachesEveryPs) {
  PS_ASSERT_OK(fleet_->ShutdownAll("test done"));
  EXPECT_EQ(ps_[0]->shutdown_reason(), "test done");
  EXPECT_EQ(ps_[1]->shutdown_reason(), "test done");
}

// A batch whose keys for one ps, of all its tables, are more than a request
// carries is refused before anything is sent, naming the table, the ps and
// what to change; one key fewer is sharded.
TEST(PsFleetTables, ABatchWithMoreKeysForOnePsThanARequestCarriesIsRefusedNamingIt) {
  const std::vector<cluster::VariableInfo> vars = {{"b", {7}, 0}};
  auto placement = cluster::ComputePlacement(vars, 2, cluster::PlacementStrategy::kGreedy, 1);
  PS_ASSERT_OK(placement);
  std::vector<std::unique_ptr<PsConnection>> ps;
  for (int i = 0; i < 2; ++i) ps.push_back(std::make_unique<InProcessPs>(i));
  std::vector<proto::EmbeddingTableConfig> tables(2);
  tables[0].set_name("first");
  tables[1].set_name("second");
  for (auto& t : tables) t.set_dim(2);
  PsFleet fleet(std::move(ps), {vars, *placement, {}, tables});
  // Ten keys of ps:0 in each table; of ps:1, half a request in the first
  // table and one more than the other half in the second.
  const int64_t limit = EmbeddingTable::kMaxKeysPerRequest;
  std::vector<std::vector<int64_t>> keys(2);
  for (int table = 0; table < 2; ++table) {
    const int64_t want_on_ps1 = table == 0 ? limit / 2 : limit - limit / 2 + 1;
    int64_t on_ps0 = 0, on_ps1 = 0;
    for (int64_t k = 0; on_ps1 < want_on_ps1; ++k) {
      if (KeyShard(k, 2) == 1) {
        keys[table].push_back(k);
        ++on_ps1;
      } else if (on_ps0 < 10) {
        keys[table].push_back(k);
        ++on_ps0;
      }
    }
  }
  std::vector<PsFleet::TableStep> step(2);
  for (int table = 0; table < 2; ++table) {
    step[table].table = tables[table].name();
    step[table].dim = 2;
    step[table].ids = Unique(keys[table].data(), static_cast<int64_t>(keys[table].size()));
  }
  const Status refused = fleet.Shard(&step);
  PS_EXPECT_CODE(refused, Code::kInvalidArgument);
  const std::string named = std::to_string(limit - limit / 2 + 1) +
                            " distinct keys of table second held by ps:1 (" +
                            std::to_string(limit + 1) + " with the tables before it)";
  EXPECT_NE(refused.message().find(named), std::string::npos) << refused.ToString();
  EXPECT_NE(refused.message().find("--batch_size"), std::string::npos) << refused.ToString();
  keys[1].pop_back();  // the last key drawn was ps:1's
  step[1].ids = Unique(keys[1].data(), static_cast<int64_t>(keys[1].size()));
  PS_EXPECT_OK(fleet.Shard(&step));
}

// A step's embedding ids, repeats and all: each unique id's row pulled once
// from the ps that holds it, in the request that pulls the variables, and
// its gradient pushed back there in the step's push.
TEST(PsFleetTables, RowsOfAStepGoToAndComeFromThePsThatHoldsEachKey) {
  const std::vector<cluster::VariableInfo> vars = {{"b", {7}, 0}};
  auto placement = cluster::ComputePlacement(vars, 3, cluster::PlacementStrategy::kGreedy, 1);
  PS_ASSERT_OK(placement);
  std::vector<std::unique_ptr<PsConnection>> ps;
  std::vector<InProcessPs*> raw;
  for (int i = 0; i < 3; ++i) {
    ps.push_back(std::make_unique<InProcessPs>(i));
    raw.push_back(static_cast<InProcessPs*>(ps.back().get()));
  }
  proto::EmbeddingTableConfig table;
  table.set_name("emb");
  table.set_dim(2);
  table.set_initializer_stddev(0);  // rows start at zero
  PsFleet fleet(std::move(ps), {vars, *placement, {}, {table}});
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(1.0f);
  PS_ASSERT_OK(fleet.InitVariables({Tensor({7})}, header));

  const std::vector<int64_t> batch = {40, 7, 40, -3, 123456789, 7, 8, 9, 10, 11};
  std::vector<PsFleet::TableStep> step(1);
  step[0].table = "emb";
  step[0].dim = 2;
  step[0].ids = Unique(batch.data(), static_cast<int64_t>(batch.size()));
  PS_ASSERT_OK(fleet.Shard(&step));
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet.PullVariablesAndRows(&values, &step, &steps));
  ASSERT_EQ(step[0].rows.shape(), (Shape{8, 2}));
  for (int64_t i = 0; i < step[0].rows.size(); ++i) EXPECT_EQ(step[0].rows[i], 0.0f);

  // Unique id u's gradient: (u, -u).
  Tensor grads({8, 2});
  for (int64_t u = 0; u < 8; ++u) {
    grads[2 * u] = static_cast<float>(u);
    grads[2 * u + 1] = -static_cast<float>(u);
  }
  PS_ASSERT_OK(fleet.PushGradientsAndRows({Tensor({7})}, step, {grads}, 0, 1, steps, false));
  PS_ASSERT_OK(fleet.PullVariablesAndRows(&values, &step, &steps));
  for (int64_t u = 0; u < 8; ++u) {
    EXPECT_EQ(step[0].rows[2 * u], -static_cast<float>(u)) << step[0].ids.keys[u];
    EXPECT_EQ(step[0].rows[2 * u + 1], static_cast<float>(u)) << step[0].ids.keys[u];
  }
  // Each ps made the rows of its keys only.
  int64_t rows = 0;
  for (int i = 0; i < 3; ++i) {
    auto st = raw[i]->GetStatus(std::chrono::seconds(1));
    PS_ASSERT_OK(st);
    EXPECT_EQ(st->tables(0).rows(), static_cast<int64_t>(step[0].places[i].size()));
    rows += st->tables(0).rows();
  }
  EXPECT_EQ(rows, 8);
  // A pull of the variables alone after it.
  PS_ASSERT_OK(fleet.PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 1);
}

// A push is checked whole before any part of it leaves: with the table's
// keys all on ps 1 and the variable on ps 0, a push whose rows are
// malformed (or whose dense gradient is) reaches neither, so ps 0 does not
// apply its part and count a step while ps 1 refuses the rest.
TEST(PsFleetTables, AMalformedPushLandsOnNoPs) {
  const std::vector<cluster::VariableInfo> vars = {{"b", {7}, 0}};
  auto placement = cluster::ComputePlacement(vars, 2, cluster::PlacementStrategy::kGreedy, 1);
  ASSERT_TRUE(placement.ok()) << placement.status().ToString();
  ASSERT_EQ(placement->ShardsOfVariable("b")[0]->ps, 0);
  std::vector<std::unique_ptr<PsConnection>> ps;
  for (int i = 0; i < 2; ++i) ps.push_back(std::make_unique<InProcessPs>(i));
  proto::EmbeddingTableConfig table;
  table.set_name("emb");
  table.set_dim(2);
  table.set_initializer_stddev(0);
  PsFleet fleet(std::move(ps), {vars, *placement, {}, {table}});
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(1.0f);
  PS_ASSERT_OK(fleet.InitVariables({Tensor({7})}, header));

  std::vector<int64_t> keys;  // keys that ps 1 holds
  for (int64_t k = 0; keys.size() < 3; ++k) {
    if (KeyShard(k, 2) == 1) keys.push_back(k);
  }
  std::vector<PsFleet::TableStep> step(1);
  step[0].table = "emb";
  step[0].dim = 2;
  step[0].ids = Unique(keys.data(), static_cast<int64_t>(keys.size()));
  PS_ASSERT_OK(fleet.Shard(&step));
  ASSERT_TRUE(step[0].places[0].empty());
  Tensor dense({7});
  dense.Fill(1.0f);
  Tensor rows({3, 2});
  rows.Fill(1.0f);
  struct Malformed {
    std::vector<Tensor> grads;
    std::vector<Tensor> row_grads;
    int dim;
    std::string why;
  };
  const std::vector<Malformed> pushes = {
      {{dense}, {Tensor({2, 2})}, 2, "row gradients of emb have shape [2,2]"},
      {{dense}, {Tensor({3, 3})}, 2, "row gradients of emb have shape [3,3]"},
      {{dense}, {Tensor({3, 3})}, 3, "rows of emb of dim 3, the table's is 2"},
      {{dense}, {}, 2, "row gradients for 0 of 1 tables"},
      {{Tensor({8})}, {rows}, 2, "the gradient of b has shape [8]"},
      {{}, {rows}, 2, "a push of 0 gradients for 1 variables"}};
  for (const Malformed& m : pushes) {
    step[0].dim = m.dim;
    auto pushed = fleet.PushGradientsAndRows(m.grads, step, m.row_grads, 0, 1, {0, 0}, false);
    ASSERT_FALSE(pushed.ok()) << m.why;
    EXPECT_EQ(pushed.status().code(), Code::kInvalidArgument) << pushed.status().ToString();
    EXPECT_NE(pushed.status().message().find(m.why), std::string::npos)
        << pushed.status().ToString();
  }
  step[0].dim = 2;
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet.PullVariablesAndRows(&values, &step, &steps));
  EXPECT_EQ(steps[0], 0) << "ps 0 applied part of a refused push";
  for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(values[0][i], 0.0f) << i;
  for (int64_t i = 0; i < step[0].rows.size(); ++i) EXPECT_EQ(step[0].rows[i], 0.0f) << i;
  // The same push, well formed, lands on both.
  PS_ASSERT_OK(fleet.PushGradientsAndRows({dense}, step, {rows}, 0, 1, steps, false));
  PS_ASSERT_OK(fleet.PullVariablesAndRows(&values, &step, &steps));
  EXPECT_EQ(steps[0], 1);
  EXPECT_EQ(values[0][0], -1.0f);
  EXPECT_EQ(step[0].rows[0], -1.0f);
}

// Blocks of rows as a checkpoint gives them: `blocks` blocks of `per`
// keys each, every value the key's own number.
class CountingRows : public PsFleet::RowSource {
 public:
  CountingRows(int blocks, int per, int dim) : blocks_(blocks), per_(per), dim_(dim) {}
  StatusOr<bool> Next(proto::RowBlock* block) override {
    if (next_ == blocks_) return false;
    block->Clear();
    block->set_table("emb");
    std::vector<int64_t> keys;
    std::string values;
    for (int k = 0; k < per_; ++k) {
      keys.push_back(int64_t{next_} * per_ + k);
      const std::vector<float> row(dim_, static_cast<float>(keys.back()));
      values.append(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(float));
    }
    block->set_keys(EncodeKeys(keys));
    block->set_values(values);
    ++next_;
    return true;
  }

 private:
  const int blocks_, per_, dim_;
  int next_ = 0;
};

// A table's rows go to the ps that holds each key, every ps's stream
// running at once from one read of the source; a ps that refuses its rows
// ends the import with its error while the others stream on (under TSan:
// the reader and the streams share only the bounded queues).
TEST(PsFleetTables, ImportedRowsReachThePsOfEachKeyAndARefusalEndsTheImport) {
  auto fleet_of = [](int num_ps) {
    std::vector<std::unique_ptr<PsConnection>> ps;
    for (int i = 0; i < num_ps; ++i) ps.push_back(std::make_unique<InProcessPs>(i));
    auto placement = cluster::ComputePlacement({}, num_ps, cluster::PlacementStrategy::kGreedy, 1);
    PS_EXPECT_OK(placement);
    proto::EmbeddingTableConfig table;
    table.set_name("emb");
    table.set_dim(2);
    return std::make_unique<PsFleet>(std::move(ps), PsFleet::Layout{{}, *placement, {}, {table}});
  };
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(1.0f);
  auto fleet = fleet_of(3);
  PS_ASSERT_OK(fleet->InitVariables({}, header));
  // 40 blocks of 1,000 keys: more blocks than wait for any one ps.
  CountingRows source(40, 1000, 2);
  Status s = fleet->ImportTable(&source);
  ASSERT_TRUE(s.ok()) << s.ToString();
  int64_t rows = 0;
  for (int i = 0; i < 3; ++i) {
    auto st = fleet->client(i)->GetStatus(std::chrono::seconds(1));
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_GT(st->tables(0).rows(), 10000) << "ps:" << i;
    rows += st->tables(0).rows();
  }
  EXPECT_EQ(rows, 40000);
  std::vector<PsFleet::TableStep> step(1);
  step[0].table = "emb";
  step[0].dim = 2;
  const std::vector<int64_t> ids = {0, 1, 17, 39999};
  step[0].ids = Unique(ids.data(), static_cast<int64_t>(ids.size()));
  PS_ASSERT_OK(fleet->Shard(&step));
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  s = fleet->PullVariablesAndRows(&values, &step, &steps);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (size_t u = 0; u < step[0].ids.keys.size(); ++u) {
    EXPECT_EQ(step[0].rows[2 * u], static_cast<float>(step[0].ids.keys[u]));
  }

  // ps:1 under another placement refuses every block.
  auto refusing = fleet_of(3);
  PS_ASSERT_OK(refusing->InitVariables({}, header));
  proto::InitHeader other = header;
  other.set_placement_fingerprint(refusing->placement().fingerprint + 1);
  PS_ASSERT_OK(refusing->client(1)->Init(other, {}));
  CountingRows again(40, 1000, 2);
  s = refusing->ImportTable(&again);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
}

}  // namespace
}  // namespace pstrain
