#include "data/batch_queue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

namespace pstrain {
namespace data {
namespace {

// `count` 1x1 images whose only pixel is the example's index (count <= 256),
// so every example in a batch can be identified.
ImageDataset IndexedDataset(int64_t count) {
  ImageDataset ds;
  ds.count = count;
  ds.rows = 1;
  ds.cols = 1;
  for (int64_t i = 0; i < count; ++i) {
    ds.pixels.push_back(static_cast<uint8_t>(i));
    ds.labels.push_back(static_cast<int32_t>(i % 10));
  }
  return ds;
}

int64_t ExampleOf(const Batch& batch, int64_t i) {
  return std::lround((batch.images[i] + 0.5f) * 255.0f);
}

// Every batch's examples, in order, grouped by epoch.
std::vector<std::vector<int64_t>> Drain(BatchQueue* queue) {
  std::vector<std::vector<int64_t>> epochs;
  Batch batch;
  while (queue->Next(&batch)) {
    if (batch.epoch == static_cast<int64_t>(epochs.size())) epochs.emplace_back();
    EXPECT_EQ(batch.epoch + 1, static_cast<int64_t>(epochs.size()));
    EXPECT_EQ(batch.images.dim(0), static_cast<int64_t>(batch.labels.size()));
    for (int64_t i = 0; i < batch.images.dim(0); ++i) {
      EXPECT_EQ(batch.labels[i], ExampleOf(batch, i) % 10);
      epochs.back().push_back(ExampleOf(batch, i));
    }
  }
  return epochs;
}

std::unique_ptr<BatchQueue> MakeQueue(const ImageDataset* ds, BatchQueueOptions opts) {
  StatusOr<std::unique_ptr<BatchQueue>> queue = BatchQueue::Create(ds, opts);
  EXPECT_TRUE(queue.ok()) << queue.status().ToString();
  return queue.ok() ? std::move(queue).value() : nullptr;
}

TEST(BatchQueue, ShardsCoverEveryExampleOncePerEpoch) {
  const ImageDataset ds = IndexedDataset(103);
  std::vector<int> seen(103, 0);
  for (int shard = 0; shard < 3; ++shard) {
    auto queue = MakeQueue(&ds, {/*batch_size=*/10, shard, /*num_shards=*/3, /*seed=*/7,
                                 /*epochs=*/2, /*capacity=*/2});
    ASSERT_NE(queue, nullptr);
    EXPECT_EQ(queue->examples_per_epoch(), shard == 0 ? 35 : 34);
    std::vector<std::vector<int64_t>> epochs = Drain(queue.get());
    ASSERT_EQ(epochs.size(), 2u);
    for (const auto& epoch : epochs) {
      EXPECT_EQ(static_cast<int64_t>(epoch.size()), queue->examples_per_epoch());
      std::set<int64_t> unique(epoch.begin(), epoch.end());
      EXPECT_EQ(unique.size(), epoch.size());
      for (int64_t example : epoch) EXPECT_EQ(example % 3, shard);
    }
    for (int64_t example : epochs[0]) ++seen[example];
  }
  EXPECT_EQ(seen, std::vector<int>(103, 1));
}

TEST(BatchQueue, EpochsEndWithAPartialBatch) {
  const ImageDataset ds = IndexedDataset(25);
  auto queue = MakeQueue(&ds, {/*batch_size=*/10, 0, 1, 0, /*epochs=*/2, 4});
  ASSERT_NE(queue, nullptr);
  std::vector<int64_t> sizes, epochs;
  Batch batch;
  while (queue->Next(&batch)) {
    sizes.push_back(batch.images.dim(0));
    epochs.push_back(batch.epoch);
    EXPECT_EQ(batch.images.shape(), (Shape{batch.images.dim(0), 1, 1, 1}));
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{10, 10, 5, 10, 10, 5}));
  EXPECT_EQ(epochs, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_FALSE(queue->Next(&batch));
}

TEST(BatchQueue, ShuffleDiffersBetweenEpochsAndIsReproducible) {
  const ImageDataset ds = IndexedDataset(200);
  const BatchQueueOptions opts = {/*batch_size=*/32, 1, 2, /*seed=*/42,
                                  /*epochs=*/3,      4};
  std::vector<std::vector<int64_t>> first = Drain(MakeQueue(&ds, opts).get());
  std::vector<std::vector<int64_t>> again = Drain(MakeQueue(&ds, opts).get());
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first, again);
  EXPECT_NE(first[0], first[1]);
  EXPECT_NE(first[1], first[2]);
  std::vector<int64_t> sorted = first[0];
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first[0], sorted);  // actually shuffled

  BatchQueueOptions other = opts;
  other.seed = 43;
  EXPECT_NE(Drain(MakeQueue(&ds, other).get())[0], first[0]);
}

TEST(BatchQueue, ForeverKeepsGoingAndStopsOnDestruction) {
  const ImageDataset ds = IndexedDataset(5);
  auto queue = MakeQueue(&ds, {/*batch_size=*/2, 0, 1, 0, /*epochs=*/0, /*capacity=*/1});
  ASSERT_NE(queue, nullptr);
  Batch batch;
  for (int i = 0; i < 30; ++i) ASSERT_TRUE(queue->Next(&batch));
  EXPECT_EQ(batch.epoch, 9);  // 3 batches per epoch
  queue.reset();              // the producer is blocked on a full queue
}

TEST(BatchQueue, BatchesKeepEveryChannel) {
  ImageDataset ds;  // four 1x1 images of 3 channels: (i, i + 1, i + 2)
  ds.count = 4;
  ds.rows = 1;
  ds.cols = 1;
  ds.depth = 3;
  for (int i = 0; i < 4; ++i) {
    for (int c = 0; c < 3; ++c) ds.pixels.push_back(static_cast<uint8_t>(10 * i + c));
    ds.labels.push_back(i);
  }
  auto queue = MakeQueue(&ds, {/*batch_size=*/4, 0, 1, /*seed=*/3, /*epochs=*/1, 2});
  ASSERT_NE(queue, nullptr);
  Batch batch;
  ASSERT_TRUE(queue->Next(&batch));
  EXPECT_EQ(batch.images.shape(), (Shape{4, 1, 1, 3}));
  for (int64_t i = 0; i < 4; ++i) {
    for (int c = 0; c < 3; ++c) {
      EXPECT_NEAR(batch.images[3 * i + c], (10 * batch.labels[i] + c) / 255.0f - 0.5f, 1e-6);
    }
  }
}

TEST(BatchQueue, RejectsBadOptions) {
  const ImageDataset ds = IndexedDataset(2);
  struct Case {
    BatchQueueOptions opts;
    const char* message;
  };
  const Case cases[] = {
      {{0, 0, 1, 0, 0, 4}, "batch_size must be positive"},
      {{8, 2, 2, 0, 0, 4}, "shard 2 of 2 is not in 0..1"},
      {{8, 0, 0, 0, 0, 4}, "shard 0 of 0"},
      {{8, -1, 2, 0, 0, 4}, "shard -1 of 2"},
      {{8, 0, 1, 0, -1, 4}, "epochs must be >= 0"},
      {{8, 0, 1, 0, 0, 0}, "capacity must be positive"},
      {{8, 2, 3, 0, 0, 4}, "shard 2 of 3 has no examples"},
  };
  for (const Case& c : cases) {
    StatusOr<std::unique_ptr<BatchQueue>> queue = BatchQueue::Create(&ds, c.opts);
    ASSERT_FALSE(queue.ok()) << c.message;
    EXPECT_EQ(queue.status().code(), Code::kInvalidArgument);
    EXPECT_NE(queue.status().message().find(c.message), std::string::npos)
        << queue.status().message();
  }
  StatusOr<std::unique_ptr<BatchQueue>> queue = BatchQueue::Create(nullptr, {});
  EXPECT_EQ(queue.status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
