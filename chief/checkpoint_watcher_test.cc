#include "chief/checkpoint_watcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "chief/checkpoint.h"
#include "chief/checkpoint_manager.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

namespace fs = std::filesystem;
using Names = std::vector<std::string>;

class CheckpointWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (fs::temp_directory_path() /
            ("pstrain_watch_" + std::to_string(getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Saves model.ckpt-<step> and the state file, as the chief does.
  void Save(CheckpointManager* manager, int64_t step) {
    auto prefix = manager->Save(step, {{"w", Tensor({2}, {1, 2})}});
    ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();
  }
  Names New(CheckpointWatcher* watcher) {
    auto names = watcher->NewCheckpoints();
    EXPECT_TRUE(names.ok()) << names.status().ToString();
    return names.ok() ? *names : Names{"<error>"};
  }
  CheckpointManager::Options Options(int max_to_keep = 5) {
    CheckpointManager::Options options;
    options.dir = dir_;
    options.max_to_keep = max_to_keep;
    return options;
  }

  std::string dir_;
};

TEST(CheckpointStep, ParsesOnlyCheckpointBaseNames) {
  EXPECT_EQ(CheckpointStep("model.ckpt-0"), 0);
  EXPECT_EQ(CheckpointStep("model.ckpt-1200"), 1200);
  EXPECT_EQ(CheckpointStep("model.ckpt-"), -1);
  EXPECT_EQ(CheckpointStep("model.ckpt-12.tmp"), -1);
  EXPECT_EQ(CheckpointStep("other-12"), -1);
  EXPECT_EQ(CheckpointStep("model.ckpt-99999999999999999999"), -1);
}

TEST_F(CheckpointWatcherTest, ReturnsEachNewCheckpointOnceOldestFirst) {
  CheckpointManager manager(Options());
  CheckpointWatcher watcher(dir_);
  EXPECT_EQ(New(&watcher), Names{});
  Save(&manager, 900);
  Save(&manager, 1000);
  Save(&manager, 100);  // numeric, not lexical, order
  EXPECT_EQ(New(&watcher), (Names{"model.ckpt-100", "model.ckpt-900", "model.ckpt-1000"}));
  EXPECT_EQ(New(&watcher), Names{});
  Save(&manager, 1100);
  EXPECT_EQ(New(&watcher), Names{"model.ckpt-1100"});
  EXPECT_EQ(New(&watcher), Names{});
}

TEST_F(CheckpointWatcherTest, SkipsCheckpointsDeletedBeforeItLooked) {
  CheckpointManager manager(Options(/*max_to_keep=*/2));
  CheckpointWatcher watcher(dir_);
  for (int64_t step : {10, 20, 30, 40}) Save(&manager, step);
  EXPECT_EQ(New(&watcher), (Names{"model.ckpt-30", "model.ckpt-40"}));
}

TEST_F(CheckpointWatcherTest, FindsIndexFilesWithoutAStateFile) {
  Tensor t({1}, {3});
  PS_ASSERT_OK(WriteCheckpoint(dir_, 7, {{"w", &t}}));
  PS_ASSERT_OK(WriteCheckpoint(dir_, 5, {{"w", &t}}));
  CheckpointWatcher watcher(dir_);
  EXPECT_EQ(New(&watcher), (Names{"model.ckpt-5", "model.ckpt-7"}));
}

TEST_F(CheckpointWatcherTest, FindsCheckpointsTheStateFileDoesNotNameYet) {
  CheckpointManager manager(Options());
  Save(&manager, 10);
  // A crash between the checkpoint and the state file.
  Tensor t({1}, {3});
  PS_ASSERT_OK(WriteCheckpoint(dir_, 20, {{"w", &t}}));
  CheckpointWatcher watcher(dir_);
  EXPECT_EQ(New(&watcher), (Names{"model.ckpt-10", "model.ckpt-20"}));
}

TEST_F(CheckpointWatcherTest, FallsBackToIndexFilesWhenTheStateFileIsMalformed) {
  Tensor t({1}, {3});
  PS_ASSERT_OK(WriteCheckpoint(dir_, 3, {{"w", &t}}));
  std::ofstream(dir_ + "/checkpoint") << "garbage\n";
  CheckpointWatcher watcher(dir_);
  EXPECT_EQ(New(&watcher), Names{"model.ckpt-3"});
}

TEST_F(CheckpointWatcherTest, IgnoresNamesWithoutAnIndexAndOtherFiles) {
  // The state file names a checkpoint whose index is gone; a data file alone,
  // a temporary file and unrelated files are not checkpoints.
  PS_ASSERT_OK(WriteCheckpointState(dir_, {"model.ckpt-9", {"model.ckpt-9"}}));
  std::ofstream(dir_ + "/model.ckpt-8.data") << "x";
  std::ofstream(dir_ + "/model.ckpt-8.index.tmp-123") << "x";
  std::ofstream(dir_ + "/events.index") << "x";
  CheckpointWatcher watcher(dir_);
  EXPECT_EQ(New(&watcher), Names{});
  // Once the index lands, the checkpoint is new.
  std::ofstream(dir_ + "/model.ckpt-9.index") << "x";
  EXPECT_EQ(New(&watcher), Names{"model.ckpt-9"});
}

TEST_F(CheckpointWatcherTest, ATrainDirThatDoesNotExistYetHasNoCheckpoints) {
  CheckpointWatcher watcher(dir_ + "/later");
  EXPECT_EQ(New(&watcher), Names{});
  fs::create_directories(dir_ + "/later");
  Tensor t({1}, {3});
  PS_ASSERT_OK(WriteCheckpoint(dir_ + "/later", 1, {{"w", &t}}));
  EXPECT_EQ(New(&watcher), Names{"model.ckpt-1"});
}

TEST_F(CheckpointWatcherTest, ATrainDirThatIsNotADirectoryIsUnavailable) {
  const std::string file = dir_ + "/not_a_dir";
  std::ofstream(file) << "x";
  CheckpointWatcher watcher(file);
  auto names = watcher.NewCheckpoints();
  ASSERT_FALSE(names.ok());
  EXPECT_EQ(names.status().code(), Code::kUnavailable);
  EXPECT_NE(names.status().message().find(file), std::string::npos) << names.status().ToString();
}

}  // namespace
}  // namespace pstrain
