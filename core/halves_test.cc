#include "core/halves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

namespace pstrain {
namespace {

// The calls' ranges, and the threads they ran on.
struct Calls {
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::set<std::thread::id> threads;
  void Record(int64_t begin, int64_t end) {
    std::lock_guard<std::mutex> lock(mu);
    ranges.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
  }
};

TEST(RunInHalves, ARangeBelowTheSplitRunsInOneCallOnTheCaller) {
  Calls calls;
  RunInHalves(99, 100, [&](int64_t b, int64_t e) { calls.Record(b, e); });
  ASSERT_EQ(calls.ranges.size(), 1u);
  EXPECT_EQ(calls.ranges[0], std::make_pair(int64_t{0}, int64_t{99}));
  EXPECT_EQ(calls.threads.count(std::this_thread::get_id()), 1u);
}

TEST(RunInHalves, ALargeRangeIsCoveredOnceInTwoHalvesOnTwoThreads) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: no second half";
  Calls calls;
  RunInHalves(101, 100, [&](int64_t b, int64_t e) { calls.Record(b, e); });
  ASSERT_EQ(calls.ranges.size(), 2u);
  std::sort(calls.ranges.begin(), calls.ranges.end());
  EXPECT_EQ(calls.ranges[0], std::make_pair(int64_t{0}, int64_t{50}));
  EXPECT_EQ(calls.ranges[1], std::make_pair(int64_t{50}, int64_t{101}));
  EXPECT_EQ(calls.threads.size(), 2u);
}

// Callers at once share the one kept thread: each one's range is still
// covered exactly once.
TEST(RunInHalves, CallersAtOnceEachCoverTheirRangeOnce) {
  constexpr int kCallers = 4, kRounds = 200;
  constexpr int64_t kN = 1000;
  std::vector<std::thread> callers;
  std::vector<std::vector<int>> seen(kCallers, std::vector<int>(kN, 0));
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) {
        RunInHalves(kN, 2, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) ++seen[c][i];
        });
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (int64_t i = 0; i < kN; ++i) {
      ASSERT_EQ(seen[c][i], kRounds) << "caller " << c << " at " << i;
    }
  }
}

// A RunInHalves inside a half (on either thread) runs whole there rather
// than wait for the thread its caller holds.
TEST(RunInHalves, ANestedCallRunsWholeOnItsThread) {
  std::atomic<int> nested_calls{0};
  std::atomic<int64_t> covered{0};
  RunInHalves(1000, 2, [&](int64_t b, int64_t e) {
    RunInHalves(e - b, 2, [&](int64_t ib, int64_t ie) {
      ++nested_calls;
      covered += ie - ib;
    });
  });
  EXPECT_EQ(covered.load(), 1000);
  EXPECT_EQ(nested_calls.load(), std::thread::hardware_concurrency() < 2 ? 1 : 2);
}

// Every byte copied exactly, for sizes that do and do not split, on and off
// a cache line, and nothing written past the end.
TEST(CopyInHalves, CopiesEveryByteAndNoMore) {
  const size_t big = kSplitElements * sizeof(float);
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{65}, big - 1, big, big + 37}) {
    std::vector<uint8_t> src(n), dest(n + 64, 0xEE);
    for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
    CopyInHalves(dest.data(), src.data(), n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(dest[i], src[i]) << "n=" << n << " byte " << i;
    for (size_t i = n; i < dest.size(); ++i) ASSERT_EQ(dest[i], 0xEE) << "n=" << n << " byte " << i;
  }
}

}  // namespace
}  // namespace pstrain
