#include "chief/table_checkpoints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "chief/checkpoint_manager.h"
#include "cluster/key_partition.h"
#include "core/testing/status_assertions.h"
#include "ps/embedding/sparse_rows.h"
#include "ps/testing/in_process_ps.h"

namespace pstrain {
namespace {

constexpr int kDim = 8;

// A fleet of `num_ps` in-process ps tasks holding one Adagrad table "emb"
// (rows expire 20 steps after their last gradient) and no variables.
std::unique_ptr<PsFleet> Fleet(int num_ps) {
  std::vector<std::unique_ptr<PsConnection>> ps;
  for (int i = 0; i < num_ps; ++i) ps.push_back(std::make_unique<InProcessPs>(i));
  PsFleet::Layout layout;
  auto placement = cluster::ComputePlacement({}, num_ps, cluster::PlacementStrategy::kGreedy, 1);
  PS_EXPECT_OK(placement);
  layout.placement = *placement;
  proto::EmbeddingTableConfig t;
  t.set_name("emb");
  t.set_dim(kDim);
  t.set_ttl_steps(20);
  layout.tables.push_back(t);
  auto fleet = std::make_unique<PsFleet>(std::move(ps), std::move(layout));
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("Adagrad");
  header.mutable_optimizer()->set_learning_rate(0.1f);
  PS_EXPECT_OK(fleet->InitVariables({}, header));
  return fleet;
}

// Pushes a gradient for `keys` (each its own ps's) as ps 0 counts a step.
void Push(PsFleet* fleet, const std::vector<int64_t>& keys, float g) {
  std::vector<std::vector<int64_t>> by_ps(fleet->num_ps());
  for (int64_t k : keys) by_ps[KeyShard(k, fleet->num_ps())].push_back(k);
  for (int ps = 0; ps < fleet->num_ps(); ++ps) {
    proto::PushHeader h;
    h.set_placement_fingerprint(fleet->placement().fingerprint);
    h.set_increment_global_step(ps == 0);
    proto::TableKeys* keys_of = h.add_sparse();
    keys_of->set_table("emb");
    keys_of->set_keys(EncodeKeys(by_ps[ps]));
    Tensor rows({static_cast<int64_t>(by_ps[ps].size()), kDim});
    rows.Fill(g);
    auto pushed = fleet->client(ps)->Push(h, {{"emb", &rows}});
    ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  }
}

// Every key's row as the fleet answers it.
std::map<int64_t, std::vector<float>> Rows(PsFleet* fleet, const std::vector<int64_t>& keys) {
  std::map<int64_t, std::vector<float>> out;
  for (int64_t k : keys) {
    proto::TableKeys lookup;
    lookup.set_table("emb");
    lookup.set_keys(EncodeKeys({k}));
    std::map<std::string, Tensor> got;
    Status s = fleet->client(KeyShard(k, fleet->num_ps()))
                   ->PullWithRows(fleet->placement().fingerprint, {}, {lookup}, &got, nullptr, 0,
                                  std::chrono::milliseconds(0));
    EXPECT_TRUE(s.ok()) << s.ToString();
    out[k].assign(got["emb"].data(), got["emb"].data() + kDim);
  }
  return out;
}

class TableCheckpoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pstrain_tables_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

// Saved from 2 ps tasks, restored onto 3: each key finds its row (and
// slots) on the ps that holds it now. Then a full checkpoint, changes
// (new rows, updated rows, a row expired), a delta: full + delta restore
// the rows as they are.
TEST_F(TableCheckpoints, RestoreOntoAnotherNumberOfPsAndFullThenDelta) {
  auto two = Fleet(2);
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 20000; ++k) keys.push_back(k * 7919 - 3000);
  Push(two.get(), keys, 0.5f);
  CheckpointManager manager({dir_.string(), 5, 10000});
  auto full = manager.Save(1, {}, [&](CheckpointWriter* w) {
    return SaveTables(two.get(), w, /*delta=*/false, /*start_deltas=*/true);
  });
  ASSERT_TRUE(full.ok()) << full.status().ToString();

  // Key 0..99 move again; 20000 new keys; ttl expires keys[0..9] after
  // steps in which only other keys move.
  std::vector<int64_t> moved(keys.begin() + 10, keys.begin() + 100), fresh;
  for (int64_t k = 0; k < 20000; ++k) fresh.push_back(k * 104729 + 1);
  Push(two.get(), moved, 1.0f);
  Push(two.get(), fresh, 0.25f);
  for (int i = 0; i < 25; ++i) Push(two.get(), moved, 0.1f);
  auto status = two->client(0)->GetStatus(std::chrono::seconds(1));
  PS_ASSERT_OK(status);
  EXPECT_GT(status->tables(0).expired(), 0);
  auto delta = manager.Save(
      30, {},
      [&](CheckpointWriter* w) {
        return SaveTables(two.get(), w, /*delta=*/true, /*start_deltas=*/false);
      },
      1);
  ASSERT_TRUE(delta.ok()) << delta.status().ToString();

  std::vector<int64_t> all = keys;
  all.insert(all.end(), fresh.begin(), fresh.end());
  const auto expected = Rows(two.get(), all);

  Checkpoint base;
  auto latest = manager.LoadLatest(&base);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  ASSERT_EQ(latest->delta_base_step, std::optional<int64_t>(1));
  // The delta holds fewer rows than the table.
  EXPECT_LT(latest->tables.at(0).num_rows(), base.tables.at(0).num_rows());
  auto three = Fleet(3);
  PS_ASSERT_OK(RestoreTables(three.get(), *latest, &base));
  const auto restored = Rows(three.get(), all);
  int differing = 0;
  for (int64_t k : all) differing += restored.at(k) != expected.at(k);
  EXPECT_EQ(differing, 0);
  int64_t rows = 0;
  for (int ps = 0; ps < 3; ++ps) {
    auto st = three->client(ps)->GetStatus(std::chrono::seconds(1));
    PS_ASSERT_OK(st);
    EXPECT_GT(st->tables(0).rows(), 0) << "ps:" << ps;
    rows += st->tables(0).rows();
  }
  int64_t before = 0;
  for (int ps = 0; ps < 2; ++ps) before += two->client(ps)->GetStatus({})->tables(0).rows();
  EXPECT_EQ(rows, before);  // the expired rows stayed dropped

  // The full checkpoint alone is not the table as it is.
  auto stale = Fleet(3);
  PS_ASSERT_OK(RestoreTables(stale.get(), base, nullptr));
  const auto old = Rows(stale.get(), all);
  differing = 0;
  for (int64_t k : all) differing += old.at(k) != expected.at(k);
  EXPECT_GT(differing, 20000);  // the fresh rows and the moved ones

  // The full checkpoint is kept on disk while the delta needs it.
  EXPECT_TRUE(std::filesystem::exists(*full + ".rows"));
}

// The rows go to every ps at once from one read of the file: a ps that
// refuses them (here: a ps initialized under another placement) ends the
// restore with its error, named, while the others' streams are running,
// and nothing waits on it for good.
TEST_F(TableCheckpoints, APsThatRefusesTheRowsEndsTheRestoreWithItsError) {
  auto two = Fleet(2);
  // Many blocks: more than the few that wait for a ps.
  for (int64_t first = 0; first < 200000; first += 50000) {
    std::vector<int64_t> keys;
    for (int64_t k = first; k < first + 50000; ++k) keys.push_back(k * 7919 - 3000);
    Push(two.get(), keys, 0.5f);
  }
  CheckpointManager manager({dir_.string(), 5, 10000});
  auto saved = manager.Save(1, {}, [&](CheckpointWriter* w) {
    return SaveTables(two.get(), w, /*delta=*/false, /*start_deltas=*/false);
  });
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  Checkpoint base;
  auto latest = manager.LoadLatest(&base);
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();

  auto three = Fleet(3);
  proto::InitHeader other;
  other.set_placement_fingerprint(three->placement().fingerprint + 1);
  other.mutable_optimizer()->set_name("Adagrad");
  other.mutable_optimizer()->set_learning_rate(0.1f);
  Status s = three->client(1)->Init(other, {});
  ASSERT_TRUE(s.ok()) << s.ToString();
  Status restored = RestoreTables(three.get(), *latest, nullptr);
  EXPECT_EQ(restored.code(), Code::kFailedPrecondition) << restored.ToString();
  EXPECT_NE(restored.message().find("placement mismatch"), std::string::npos)
      << restored.ToString();
}

}  // namespace
}  // namespace pstrain
