#include "chief/training_done.h"

#include <gtest/gtest.h>

#include <fstream>

#include "core/test_util.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

TEST(TrainingDone, MarkNamesTheFinalStepAndClearRemovesIt) {
  test_util::TempDir dir;
  auto none = FinalCheckpointStep(dir.path());
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(*none, -1);
  PS_ASSERT_OK(MarkTrainingDone(dir.path(), "model.ckpt-1200"));
  auto step = FinalCheckpointStep(dir.path());
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(*step, 1200);
  PS_ASSERT_OK(ClearTrainingDone(dir.path()));
  EXPECT_EQ(*FinalCheckpointStep(dir.path()), -1);
  PS_EXPECT_OK(ClearTrainingDone(dir.path()));  // nothing to remove
}

TEST(TrainingDone, AMarkNamingNoCheckpointIsDataLossNamingTheFile) {
  test_util::TempDir dir;
  std::ofstream(dir.path() + "/training_done") << "garbage\n";
  auto step = FinalCheckpointStep(dir.path());
  ASSERT_FALSE(step.ok());
  EXPECT_EQ(step.status().code(), Code::kDataLoss);
  EXPECT_NE(step.status().message().find("training_done names no checkpoint: \"garbage\""),
            std::string::npos)
      << step.status().ToString();
}

}  // namespace
}  // namespace pstrain
