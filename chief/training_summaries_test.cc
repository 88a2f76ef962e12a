#include "chief/training_summaries.h"

#include <gtest/gtest.h>

#include <map>

#include "chief/summary/event_reader.h"
#include "core/test_util.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

// Before any worker has reported a loss (the chief's mean is then 0), the
// summaries have no loss point: a 0 would read as a perfect model on the
// chart. The other scalars are written at every step.
TEST(TrainingSummaries, NoLossPointBeforeAWorkerReportsOne) {
  test_util::TempDir dir;
  auto summaries = TrainingSummaries::Create(dir.path(), nullptr, nullptr, ImageInput());
  ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
  PS_ASSERT_OK((*summaries)->Scalars(1, 0, 0.1, 2, 256));
  PS_ASSERT_OK((*summaries)->Scalars(2, 0.75, 0.1, 2, 256));
  PS_ASSERT_OK((*summaries)->Flush());
  auto events = ReadEventFile((*summaries)->path());
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::map<std::string, std::vector<int64_t>> steps;  // by tag
  for (const auto& e : *events) {
    for (const auto& v : e.summary().value()) steps[v.tag()].push_back(e.step());
  }
  EXPECT_EQ(steps["loss"], (std::vector<int64_t>{2}));
  EXPECT_EQ(steps["learning_rate"], (std::vector<int64_t>{1, 2}));
}

}  // namespace
}  // namespace pstrain
