#include "chief/saved_rows.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <vector>

#include "core/testing/status_assertions.h"
#include "ps/embedding/row_initializer.h"
#include "ps/testing/row_blocks.h"

namespace pstrain {
namespace {

proto::RowBlock Block(const std::vector<int64_t>& keys, const std::vector<float>& values,
                      bool erase = false) {
  return MakeRowBlock("emb", keys, values, erase);
}

// A full checkpoint at step 3 and a delta of it at step 7 (one row changed,
// one added, one erased): the evaluator sees the rows a restore would give,
// values without their slots, and a key never saved at its initial value.
TEST(SavedRows, AreTheFullCheckpointsWithTheDeltaApplied) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("saved_rows_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  auto full = CheckpointWriter::Create(dir.string(), 3);
  PS_ASSERT_OK(full);
  ASSERT_TRUE(
      (*full)->BeginTable("emb", 2, {"accumulator"}).ok());  // 4 floats a row: 2 values, 2 slots
  PS_ASSERT_OK((*full)->AddRows(Block({5, 9}, {1, 2, 0, 0, 3, 4, 0, 0})));
  PS_ASSERT_OK((*full)->AddRows(Block({11}, {5, 6, 0, 0})));
  PS_ASSERT_OK((*full)->Finish());
  auto delta = CheckpointWriter::Create(dir.string(), 7);
  PS_ASSERT_OK(delta);
  (*delta)->SetDeltaBase(3);
  PS_ASSERT_OK((*delta)->BeginTable("emb", 2, {"accumulator"}));
  PS_ASSERT_OK((*delta)->AddRows(Block({9, 12}, {7, 8, 0, 0, 9, 10, 0, 0})));
  PS_ASSERT_OK((*delta)->AddRows(Block({11}, {}, /*erase=*/true)));
  auto prefix = (*delta)->Finish();
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  auto ckpt = ReadCheckpoint(*prefix);
  PS_ASSERT_OK(ckpt);

  proto::EmbeddingTableConfig config;
  config.set_name("emb");
  config.set_dim(2);
  auto saved = SavedRows::Read(*ckpt, dir.string(), {config});
  ASSERT_TRUE(saved.ok()) << saved.status().ToString();
  EXPECT_EQ(saved->rows("emb"), 3);  // 5, 9 and 12; 11 erased
  std::vector<PsFleet::TableStep> steps(1);
  steps[0].table = "emb";
  steps[0].dim = 2;
  steps[0].ids.keys = {5, 9, 12, 11};
  PS_ASSERT_OK(saved->Pull(&steps));
  float initial[2];
  RowInitializer("emb", 0, 2, DefaultEmbeddingStddev(2)).Fill(11, initial);
  const std::vector<float> want = {1, 2, 7, 8, 9, 10, initial[0], initial[1]};
  ASSERT_EQ(steps[0].rows.size(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(steps[0].rows[i], want[i]) << i;

  config.set_dim(3);
  EXPECT_EQ(SavedRows::Read(*ckpt, dir.string(), {config}).status().code(), Code::kInvalidArgument);
  steps[0].table = "other";
  EXPECT_EQ(saved->Pull(&steps).code(), Code::kInvalidArgument);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pstrain
