#include "data/shuffle_buffer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"

namespace pstrain {
namespace data {
namespace {

// An example identified by its label.
Example Id(int32_t id) {
  Example example;
  example.label = id;
  return example;
}

std::unique_ptr<ShuffleBuffer> MakeBuffer(int64_t capacity, int64_t min_after_dequeue,
                                          uint64_t seed = 1) {
  StatusOr<std::unique_ptr<ShuffleBuffer>> buffer =
      ShuffleBuffer::Create(capacity, min_after_dequeue, seed);
  EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
  return buffer.ok() ? std::move(buffer).value() : nullptr;
}

// Enqueues 0..count-1 from a thread of its own, then closes, while this
// thread dequeues everything: the ids in the order they came out.
std::vector<int32_t> PassThrough(ShuffleBuffer* buffer, int32_t count, bool jitter = false) {
  std::thread producer([&] {
    for (int32_t i = 0; i < count; ++i) {
      if (jitter && i % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      PS_ASSERT_OK(buffer->Enqueue(Id(i)));
    }
    buffer->Close();
  });
  std::vector<int32_t> out;
  Example example;
  Status status;
  int64_t dequeues = 0;
  while ((status = buffer->Dequeue(&example)).ok()) {
    if (jitter && ++dequeues % 89 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
    out.push_back(example.label);
  }
  EXPECT_EQ(status.code(), Code::kOutOfRange);
  producer.join();
  return out;
}

bool IsPermutation(std::vector<int32_t> ids, int32_t count) {
  std::sort(ids.begin(), ids.end());
  for (int32_t i = 0; i < count; ++i) {
    if (i >= static_cast<int32_t>(ids.size()) || ids[i] != i) return false;
  }
  return static_cast<int32_t>(ids.size()) == count;
}

// Mean |position out - position in| over a sequence of ids 0..n-1.
double MeanDisplacement(const std::vector<int32_t>& ids) {
  double sum = 0;
  for (size_t i = 0; i < ids.size(); ++i) sum += std::abs(static_cast<double>(ids[i]) - i);
  return sum / ids.size();
}

TEST(ShuffleBuffer, RejectsBadSizes) {
  struct Case {
    int64_t capacity, min_after_dequeue;
    const char* message;
  };
  const Case cases[] = {
      {10, -1, "min_after_dequeue must be >= 0"},
      {10, 10, "min_after_dequeue 10 must be below capacity 10"},
      {5, 8, "must be below capacity 5"},
      {0, 0, "must be below capacity 0"},
  };
  for (const Case& c : cases) {
    StatusOr<std::unique_ptr<ShuffleBuffer>> buffer =
        ShuffleBuffer::Create(c.capacity, c.min_after_dequeue, 0);
    ASSERT_FALSE(buffer.ok()) << c.message;
    EXPECT_EQ(buffer.status().code(), Code::kInvalidArgument);
    EXPECT_NE(buffer.status().message().find(c.message), std::string::npos)
        << buffer.status().message();
  }
  PS_EXPECT_OK(ShuffleBuffer::Create(1, 0, 0));
}

TEST(ShuffleBuffer, WaitsForMoreThanMinAfterDequeue) {
  auto buffer = MakeBuffer(/*capacity=*/10, /*min_after_dequeue=*/4);
  ASSERT_NE(buffer, nullptr);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(buffer->Enqueue(Id(i)).ok());
  std::atomic<bool> dequeued{false};
  Example example;
  std::thread consumer([&] {
    PS_ASSERT_OK(buffer->Dequeue(&example));
    dequeued = true;
  });
  ASSERT_TRUE(WaitUntil([&] { return buffer->blocked() == 1 || dequeued; }));
  EXPECT_FALSE(dequeued) << "dequeued with only min_after_dequeue held";
  EXPECT_EQ(buffer->size(), 4);
  PS_ASSERT_OK(buffer->Enqueue(Id(4)));
  consumer.join();
  EXPECT_TRUE(dequeued);
  EXPECT_EQ(buffer->size(), 4);
}

TEST(ShuffleBuffer, NeverGoesBelowMinAfterDequeueBeforeClose) {
  constexpr int64_t kMin = 100;
  constexpr int32_t kCount = 20000;
  auto buffer = MakeBuffer(/*capacity=*/150, kMin);
  ASSERT_NE(buffer, nullptr);
  std::thread producer([&] {
    for (int32_t i = 0; i < kCount; ++i) ASSERT_TRUE(buffer->Enqueue(Id(i)).ok());
  });
  // Only this thread removes examples, so what it sees after a dequeue can
  // only have grown since.
  Example example;
  int64_t low = kCount;
  for (int32_t i = 0; i < kCount - kMin; ++i) {
    PS_ASSERT_OK(buffer->Dequeue(&example));
    low = std::min(low, buffer->size());
  }
  EXPECT_GE(low, kMin);
  producer.join();
  EXPECT_EQ(buffer->size(), kMin);
  buffer->Close();
  for (int64_t i = 0; i < kMin; ++i) ASSERT_TRUE(buffer->Dequeue(&example).ok());
  EXPECT_EQ(buffer->Dequeue(&example).code(), Code::kOutOfRange);
}

TEST(ShuffleBuffer, MixesTheOrder) {
  constexpr int32_t kCount = 10000;
  auto buffer = MakeBuffer(/*capacity=*/1100, /*min_after_dequeue=*/1000, /*seed=*/5);
  ASSERT_NE(buffer, nullptr);
  const std::vector<int32_t> out = PassThrough(buffer.get(), kCount);
  ASSERT_TRUE(IsPermutation(out, kCount));
  // An example waits in the pool of 1001 for a geometric number of draws:
  // about 1001 * 2 / e = 736 positions from where it went in, on average.
  EXPECT_GT(MeanDisplacement(out), 500);
  EXPECT_LT(MeanDisplacement(out), 1000);

  // The measure itself: a FIFO (no min_after_dequeue) does not move anything.
  auto fifo = MakeBuffer(/*capacity=*/1100, /*min_after_dequeue=*/0);
  ASSERT_NE(fifo, nullptr);
  EXPECT_EQ(MeanDisplacement(PassThrough(fifo.get(), kCount)), 0);
}

TEST(ShuffleBuffer, ChoosesUniformlyFromThePool) {
  // Ten examples, min_after_dequeue 9: the one dequeue allowed takes each of
  // them with probability 1/10. Over 4000 seeds each count is 400 +- 19.
  constexpr int kSeeds = 4000;
  std::vector<int> counts(10, 0);
  for (int seed = 0; seed < kSeeds; ++seed) {
    auto buffer = MakeBuffer(/*capacity=*/10, /*min_after_dequeue=*/9, seed);
    ASSERT_NE(buffer, nullptr);
    for (int i = 0; i < 10; ++i) ASSERT_TRUE(buffer->Enqueue(Id(i)).ok());
    Example example;
    PS_ASSERT_OK(buffer->Dequeue(&example));
    ++counts[example.label];
  }
  for (int i = 0; i < 10; ++i) {
    EXPECT_GT(counts[i], 300) << "example " << i;
    EXPECT_LT(counts[i], 500) << "example " << i;
  }
}

TEST(ShuffleBuffer, SeveralProducersAndConsumersLoseAndDuplicateNothing) {
  constexpr int kProducers = 4, kConsumers = 3;
  constexpr int32_t kEach = 5000;
  auto buffer = MakeBuffer(/*capacity=*/64, /*min_after_dequeue=*/20);
  ASSERT_NE(buffer, nullptr);
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      for (int32_t i = 0; i < kEach; ++i) ASSERT_TRUE(buffer->Enqueue(Id(p * kEach + i)).ok());
    });
  }
  std::vector<std::vector<int32_t>> taken(kConsumers);
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c) {
    consumers.emplace_back([&, c] {
      std::vector<Example> examples;
      Status status;
      while ((status = buffer->DequeueUpTo(7, &examples)).ok()) {
        for (const Example& e : examples) taken[c].push_back(e.label);
        examples.clear();
      }
      EXPECT_EQ(status.code(), Code::kOutOfRange);
    });
  }
  for (std::thread& t : producers) t.join();
  buffer->Close();
  for (std::thread& t : consumers) t.join();
  std::vector<int32_t> all;
  for (const auto& ids : taken) {
    EXPECT_FALSE(ids.empty());
    all.insert(all.end(), ids.begin(), ids.end());
  }
  EXPECT_TRUE(IsPermutation(all, kProducers * kEach));
}

TEST(ShuffleBuffer, DrainsEverythingAfterClose) {
  auto buffer = MakeBuffer(/*capacity=*/20, /*min_after_dequeue=*/10);
  ASSERT_NE(buffer, nullptr);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(buffer->Enqueue(Id(i)).ok());
  // A consumer waiting below the floor is released by Close.
  std::vector<int32_t> out;
  std::thread consumer([&] {
    Example example;
    Status status;
    while ((status = buffer->Dequeue(&example)).ok()) out.push_back(example.label);
    EXPECT_EQ(status.code(), Code::kOutOfRange);
  });
  ASSERT_TRUE(WaitUntil([&] { return buffer->blocked() == 1; }));
  buffer->Close();
  consumer.join();
  EXPECT_TRUE(IsPermutation(out, 5));
  EXPECT_EQ(buffer->size(), 0);
  EXPECT_EQ(buffer->Enqueue(Id(9)).code(), Code::kCancelled);
  buffer->Close();  // idempotent
  Example example;
  EXPECT_EQ(buffer->Dequeue(&example).code(), Code::kOutOfRange);
}

TEST(ShuffleBuffer, DequeueUpToEndsWithAPartialBatch) {
  auto buffer = MakeBuffer(/*capacity=*/10, /*min_after_dequeue=*/2);
  ASSERT_NE(buffer, nullptr);
  for (int i = 0; i < 7; ++i) ASSERT_TRUE(buffer->Enqueue(Id(i)).ok());
  std::vector<Example> examples;
  PS_ASSERT_OK(buffer->DequeueUpTo(4, &examples));  // 7 - 4 = 3 > 2 stay
  EXPECT_EQ(examples.size(), 4u);
  buffer->Close();
  PS_ASSERT_OK(buffer->DequeueUpTo(4, &examples));
  EXPECT_EQ(examples.size(), 7u);
  EXPECT_EQ(buffer->DequeueUpTo(4, &examples).code(), Code::kOutOfRange);
  std::vector<int32_t> ids;
  for (const Example& e : examples) ids.push_back(e.label);
  EXPECT_TRUE(IsPermutation(ids, 7));
}

TEST(ShuffleBuffer, CancelReleasesBlockedProducersAndConsumers) {
  auto full = MakeBuffer(/*capacity=*/2, /*min_after_dequeue=*/1);
  auto starved = MakeBuffer(/*capacity=*/2, /*min_after_dequeue=*/1);
  ASSERT_NE(full, nullptr);
  ASSERT_NE(starved, nullptr);
  PS_ASSERT_OK(full->Enqueue(Id(0)));
  PS_ASSERT_OK(full->Enqueue(Id(1)));
  Status produced, consumed;
  std::thread producer([&] { produced = full->Enqueue(Id(2)); });
  std::thread consumer([&] {
    Example example;
    consumed = starved->Dequeue(&example);
  });
  ASSERT_TRUE(WaitUntil([&] { return full->blocked() == 1 && starved->blocked() == 1; }));
  full->Cancel();
  starved->Cancel();
  producer.join();
  consumer.join();
  EXPECT_EQ(produced.code(), Code::kCancelled);
  EXPECT_EQ(consumed.code(), Code::kCancelled);
  Example example;
  EXPECT_EQ(full->Dequeue(&example).code(), Code::kCancelled);
  EXPECT_EQ(full->size(), 0);
}

TEST(ShuffleBuffer, OrderDependsOnArrivalsAndSeedNotOnTiming) {
  constexpr int32_t kCount = 5000;
  auto steady = MakeBuffer(/*capacity=*/300, /*min_after_dequeue=*/100, /*seed=*/11);
  auto jittered = MakeBuffer(/*capacity=*/300, /*min_after_dequeue=*/100, /*seed=*/11);
  auto other = MakeBuffer(/*capacity=*/300, /*min_after_dequeue=*/100, /*seed=*/12);
  ASSERT_NE(steady, nullptr);
  ASSERT_NE(jittered, nullptr);
  ASSERT_NE(other, nullptr);
  const std::vector<int32_t> a = PassThrough(steady.get(), kCount);
  const std::vector<int32_t> b = PassThrough(jittered.get(), kCount, /*jitter=*/true);
  ASSERT_TRUE(IsPermutation(a, kCount));
  EXPECT_EQ(a, b);
  EXPECT_NE(PassThrough(other.get(), kCount), a);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
