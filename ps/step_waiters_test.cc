#include "ps/step_waiters.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "core/testing/fake_clock.h"
#include "core/testing/wait_until.h"

namespace pstrain {
namespace {

// Outcomes as the callbacks report them, by wait.
struct Outcomes {
  std::mutex mu;
  std::vector<std::pair<int, Status>> seen;
  StepWaiters::Ready For(int wait) {
    return [this, wait](const Status& s) {
      std::lock_guard<std::mutex> lock(mu);
      seen.emplace_back(wait, s);
    };
  }
  std::vector<std::pair<int, Status>> Get() {
    std::lock_guard<std::mutex> lock(mu);
    return seen;
  }
};

TEST(StepWaiters, AStepReachedNeedsNoWait) {
  FakeClock clock;
  Outcomes outcomes;  // outlives the waits
  StepWaiters waiters(&clock, nullptr);
  waiters.Advance(5);
  EXPECT_EQ(waiters.Add(5, clock.Now() + std::chrono::seconds(1), outcomes.For(0)), 0u);
  EXPECT_EQ(waiters.Add(3, clock.Now() + std::chrono::seconds(1), outcomes.For(1)), 0u);
  EXPECT_TRUE(outcomes.Get().empty());
  EXPECT_EQ(waiters.pending(), 0);
}

// Each wait ends when its own step comes, not before; thousands of them
// hold no thread but the timer's.
TEST(StepWaiters, EachWaitEndsWithItsStep) {
  FakeClock clock;
  Outcomes outcomes;  // outlives the waits
  StepWaiters waiters(&clock, nullptr);
  const auto later = clock.Now() + std::chrono::seconds(60);
  for (int i = 0; i < 2000; ++i) ASSERT_NE(waiters.Add(1 + i % 2, later, outcomes.For(i)), 0u);
  EXPECT_EQ(waiters.pending(), 2000);
  waiters.Advance(1);
  auto seen = outcomes.Get();
  ASSERT_EQ(seen.size(), 1000u);
  for (const auto& [wait, status] : seen) {
    EXPECT_EQ(wait % 2, 0) << "wait " << wait << " is for step 2";
    EXPECT_TRUE(status.ok()) << status.ToString();
  }
  waiters.Advance(1);  // no step: nothing more ends
  EXPECT_EQ(outcomes.Get().size(), 1000u);
  waiters.Advance(2);
  EXPECT_EQ(outcomes.Get().size(), 2000u);
  EXPECT_EQ(waiters.pending(), 0);
}

// A wait ends at its deadline on the clock, saying what the step lacks;
// one with a later deadline waits on.
TEST(StepWaiters, AWaitEndsAtItsDeadline) {
  FakeClock clock;
  Outcomes outcomes;  // outlives the waits
  StepWaiters waiters(&clock, [] { return std::string(" (1 of 2 gradients for step 4)"); });
  waiters.Advance(3);
  ASSERT_NE(waiters.Add(4, clock.Now() + std::chrono::seconds(10), outcomes.For(0)), 0u);
  ASSERT_NE(waiters.Add(4, clock.Now() + std::chrono::seconds(20), outcomes.For(1)), 0u);
  ASSERT_TRUE(clock.AwaitSleepers(1));
  clock.Advance(std::chrono::milliseconds(9999));
  ASSERT_TRUE(clock.AwaitSleepers(1));
  EXPECT_TRUE(outcomes.Get().empty());
  clock.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(clock.AwaitSleepers(1));  // asleep again: until the second deadline
  auto seen = outcomes.Get();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, 0);
  EXPECT_EQ(seen[0].second.code(), Code::kDeadlineExceeded) << seen[0].second.ToString();
  EXPECT_EQ(seen[0].second.message(),
            "at step 3, still waiting for step 4 (1 of 2 gradients for step 4)");
  waiters.Advance(4);
  seen = outcomes.Get();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(seen[1].second.ok()) << seen[1].second.ToString();
}

// An earlier deadline added while the timer sleeps for a later one is kept.
TEST(StepWaiters, AnEarlierDeadlineWakesTheTimer) {
  FakeClock clock;
  Outcomes outcomes;  // outlives the waits
  StepWaiters waiters(&clock, nullptr);
  ASSERT_NE(waiters.Add(1, clock.Now() + std::chrono::seconds(100), outcomes.For(0)), 0u);
  ASSERT_TRUE(clock.AwaitSleepers(1));
  ASSERT_NE(waiters.Add(1, clock.Now() + std::chrono::seconds(1), outcomes.For(1)), 0u);
  clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(WaitUntil([&] { return !outcomes.Get().empty(); }, std::chrono::seconds(10)));
  auto seen = outcomes.Get();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, 1);
}

TEST(StepWaiters, CancelAndRestartEndWaits) {
  FakeClock clock;
  Outcomes outcomes;  // outlives the waits
  StepWaiters waiters(&clock, nullptr);
  const auto later = clock.Now() + std::chrono::seconds(60);
  const uint64_t first = waiters.Add(1, later, outcomes.For(0));
  ASSERT_NE(waiters.Add(1, later, outcomes.For(1)), 0u);
  waiters.Cancel(first);
  waiters.Cancel(first);  // once only
  auto seen = outcomes.Get();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].second.code(), Code::kCancelled) << seen[0].second.ToString();
  waiters.Restart(0);
  seen = outcomes.Get();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[1].second.code(), Code::kAborted) << seen[1].second.ToString();
  EXPECT_EQ(waiters.step(), 0);
}

// Once Cancel returns, the wait's callback is not running: a step ending
// the waits on one thread while another cancels them never lets a callback
// run after its Cancel returned.
TEST(StepWaiters, CancelReturnsOnlyOnceTheCallbackHasReturned) {
  FakeClock clock;
  constexpr int kWaits = 200;
  std::vector<std::atomic<int>> state(kWaits);  // 0 pending, 1 in callback, 2 done
  StepWaiters waiters(&clock, nullptr);
  std::vector<uint64_t> ids;
  for (int i = 0; i < kWaits; ++i) {
    ids.push_back(
        waiters.Add(1, clock.Now() + std::chrono::seconds(60), [&state, i](const Status&) {
          state[i] = 1;
          std::this_thread::yield();
          state[i] = 2;
        }));
  }
  std::thread stepper([&] { waiters.Advance(1); });
  for (int i = kWaits - 1; i >= 0; --i) {
    waiters.Cancel(ids[i]);
    EXPECT_EQ(state[i].load(), 2) << "wait " << i << "'s callback still running after Cancel";
  }
  stepper.join();
}

}  // namespace
}  // namespace pstrain
