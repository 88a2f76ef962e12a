#include "core/thread_priority.h"

#include <gtest/gtest.h>

#include <thread>

#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

// A thread that moves to idle priority leaves the rest of the process as it
// was, and the threads it starts afterwards (an OpenMP pool's) inherit it.
TEST(ThreadPriority, AThreadsIdlePriorityIsItsOwnAndItsChildrensOnly) {
  ASSERT_FALSE(ThisThreadRunsAtIdlePriority()) << "the test runs at idle priority already";
  bool own = false, child = false;
  Status set;
  std::thread lowered([&] {
    set = RunThisThreadAtIdlePriority();
    own = ThisThreadRunsAtIdlePriority();
    std::thread started([&] { child = ThisThreadRunsAtIdlePriority(); });
    started.join();
  });
  lowered.join();
  PS_ASSERT_OK(set);
  EXPECT_TRUE(own);
  EXPECT_TRUE(child);
  EXPECT_FALSE(ThisThreadRunsAtIdlePriority());
}

}  // namespace
}  // namespace pstrain
