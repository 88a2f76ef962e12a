#include "data/input_pipeline.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/testing/status_assertions.h"
#include "data/pixel_ids.h"
#include "data/shard_order.h"

namespace pstrain {
namespace data {
namespace {

// `count` 2x2x1 images that name their example: pixel 0 is index % 256,
// pixel 1 index / 256 (count <= 65536), pixels 2 and 3 (7 * index) % 256 and
// 255 - pixel 2. Label index % 10.
ImageDataset IndexedDataset(int64_t count) {
  ImageDataset ds;
  ds.count = count;
  ds.rows = 2;
  ds.cols = 2;
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t mixed = static_cast<uint8_t>((7 * i) % 256);
    ds.pixels.insert(ds.pixels.end(), {static_cast<uint8_t>(i % 256), static_cast<uint8_t>(i / 256),
                                       mixed, static_cast<uint8_t>(255 - mixed)});
    ds.labels.push_back(static_cast<int32_t>(i % 10));
  }
  return ds;
}

int64_t Pixel(float scaled) { return std::lround((scaled + 0.5f) * 255.0f); }

// The example image i of a SCALE batch of IndexedDataset came from; checks
// that the rest of the image and the label agree with it.
int64_t ExampleOf(const Batch& batch, int64_t i) {
  const float* image = batch.images.data() + 4 * i;
  const int64_t example = Pixel(image[0]) + 256 * Pixel(image[1]);
  EXPECT_EQ(Pixel(image[2]), (7 * example) % 256);
  EXPECT_EQ(Pixel(image[3]), 255 - (7 * example) % 256);
  EXPECT_EQ(batch.labels[i], example % 10);
  return example;
}

// `count` random 32x32x3 images, labels i % 10.
ImageDataset RandomDataset(int64_t count, uint64_t seed) {
  ImageDataset ds;
  ds.count = count;
  ds.rows = ds.cols = 32;
  ds.depth = 3;
  std::mt19937_64 rng(seed);
  ds.pixels.resize(static_cast<size_t>(count * ds.image_size()));
  for (uint8_t& p : ds.pixels) p = static_cast<uint8_t>(rng() % 256);
  for (int64_t i = 0; i < count; ++i) ds.labels.push_back(static_cast<int32_t>(i % 10));
  return ds;
}

std::unique_ptr<InputPipeline> MakePipeline(const ImageDataset* ds,
                                            const InputPipelineOptions& opts) {
  StatusOr<std::unique_ptr<InputPipeline>> pipeline = InputPipeline::Create(ds, opts);
  EXPECT_TRUE(pipeline.ok()) << pipeline.status().ToString();
  return pipeline.ok() ? std::move(pipeline).value() : nullptr;
}

std::vector<Batch> DrainBatches(BatchSource* source) {
  std::vector<Batch> batches;
  Batch batch;
  while (source->Next(&batch)) batches.push_back(std::move(batch));
  EXPECT_FALSE(source->Next(&batch));
  return batches;
}

// Options for SCALE batches; min_after_dequeue 0: no shuffle buffer.
InputPipelineOptions Options(int batch_size, int64_t epochs, int64_t min_after_dequeue = 0) {
  InputPipelineOptions opts;
  opts.batch_size = batch_size;
  opts.epochs = epochs;
  opts.min_after_dequeue = min_after_dequeue;
  return opts;
}

// The examples that an unbuffered pipeline over shard `shard_index` of
// `num_shards` of IndexedDataset(count) gives, in batches of 8, in order, one
// vector per epoch; checks that the epochs follow one another.
std::vector<std::vector<int64_t>> UnbufferedEpochs(int64_t count, int shard_index, int num_shards,
                                                   uint64_t seed, int64_t epochs_to_run) {
  const ImageDataset ds = IndexedDataset(count);
  InputPipelineOptions opts = Options(/*batch_size=*/8, epochs_to_run);
  opts.shard = {shard_index, num_shards};
  opts.seed = seed;
  std::vector<std::vector<int64_t>> epochs;
  std::unique_ptr<InputPipeline> pipeline = MakePipeline(&ds, opts);
  if (pipeline == nullptr) return epochs;
  for (const Batch& batch : DrainBatches(pipeline.get())) {
    if (static_cast<int64_t>(epochs.size()) <= batch.epoch) epochs.resize(batch.epoch + 1);
    EXPECT_EQ(batch.epoch + 1, static_cast<int64_t>(epochs.size())) << "an epoch went back";
    for (int64_t i = 0; i < batch.images.dim(0); ++i) {
      epochs[batch.epoch].push_back(ExampleOf(batch, i));
    }
  }
  return epochs;
}

// Options for DISTORT batches of 24x24 crops through a shuffle buffer.
InputPipelineOptions DistortOptions(int batch_size, int64_t epochs, int64_t min_after_dequeue) {
  InputPipelineOptions opts = Options(batch_size, epochs, min_after_dequeue);
  opts.preprocessing = proto::InputSpec::DISTORT;
  opts.height = opts.width = 24;
  return opts;
}

InputPipelineOptions BufferedOptions() {
  InputPipelineOptions opts = Options(/*batch_size=*/16, /*epochs=*/1, /*min_after_dequeue=*/100);
  opts.seed = 3;
  return opts;
}

void ExpectSameBatches(const std::vector<Batch>& a, const std::vector<Batch>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].images.shape(), b[i].images.shape()) << "batch " << i;
    EXPECT_EQ(a[i].labels, b[i].labels) << "batch " << i;
    EXPECT_EQ(a[i].epoch, b[i].epoch) << "batch " << i;
    EXPECT_EQ(0, std::memcmp(a[i].images.data(), b[i].images.data(), a[i].images.bytes()))
        << "batch " << i;
  }
}

TEST(InputPipeline, EveryExampleOfTheShardOncePerEpoch) {
  const ImageDataset ds = IndexedDataset(1003);
  std::vector<int> seen(1003, 0);
  for (int shard = 0; shard < 3; ++shard) {
    InputPipelineOptions opts = BufferedOptions();
    opts.shard = {shard, 3};
    opts.reader_threads = 1 + shard;  // 1, 2 and 3 readers
    auto pipeline = MakePipeline(&ds, opts);
    ASSERT_NE(pipeline, nullptr);
    EXPECT_EQ(pipeline->examples_per_epoch(), shard == 0 ? 335 : 334);
    std::set<int64_t> examples;
    for (const Batch& batch : DrainBatches(pipeline.get())) {
      EXPECT_EQ(batch.epoch, 0);
      for (int64_t i = 0; i < batch.images.dim(0); ++i) {
        const int64_t example = ExampleOf(batch, i);
        EXPECT_EQ(example % 3, shard);
        EXPECT_TRUE(examples.insert(example).second) << "example " << example << " twice";
        ++seen[example];
      }
    }
    EXPECT_EQ(static_cast<int64_t>(examples.size()), pipeline->examples_per_epoch());
  }
  EXPECT_EQ(seen, std::vector<int>(1003, 1));
}

TEST(InputPipeline, SeveralEpochsGiveEachExampleOncePerEpoch) {
  const ImageDataset ds = IndexedDataset(500);
  InputPipelineOptions opts = BufferedOptions();
  opts.epochs = 3;
  opts.reader_threads = 2;
  auto pipeline = MakePipeline(&ds, opts);
  ASSERT_NE(pipeline, nullptr);
  std::vector<int> seen(500, 0);
  std::vector<Batch> batches = DrainBatches(pipeline.get());
  ASSERT_EQ(batches.size(), 94u);  // 1500 examples in batches of 16
  for (const Batch& batch : batches) {
    EXPECT_GE(batch.epoch, 0);
    EXPECT_LE(batch.epoch, 2);
    for (int64_t i = 0; i < batch.images.dim(0); ++i) ++seen[ExampleOf(batch, i)];
  }
  EXPECT_EQ(seen, std::vector<int>(500, 3));
  // The first batches draw from the first 116 examples read, all of epoch 0;
  // the last ones from what is left of epoch 2.
  EXPECT_EQ(batches.front().epoch, 0);
  EXPECT_EQ(batches.back().epoch, 2);
}

TEST(InputPipeline, BufferedEpochsEndWithOnePartialBatch) {
  const ImageDataset ds = IndexedDataset(23);
  auto pipeline =
      MakePipeline(&ds, Options(/*batch_size=*/10, /*epochs=*/2, /*min_after_dequeue=*/5));
  ASSERT_NE(pipeline, nullptr);
  std::vector<int64_t> sizes;
  for (const Batch& batch : DrainBatches(pipeline.get())) {
    sizes.push_back(batch.images.dim(0));
    EXPECT_EQ(batch.images.shape(), (Shape{batch.images.dim(0), 2, 2, 1}));
    EXPECT_EQ(static_cast<int64_t>(batch.labels.size()), batch.images.dim(0));
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{10, 10, 10, 10, 6}));
  Batch batch;
  EXPECT_FALSE(pipeline->Next(&batch));
}

TEST(InputPipeline, UnbufferedEpochsEachEndWithAPartialBatch) {
  const ImageDataset ds = IndexedDataset(23);
  auto pipeline = MakePipeline(&ds, Options(/*batch_size=*/10, /*epochs=*/2));
  ASSERT_NE(pipeline, nullptr);
  std::vector<int64_t> sizes, epochs;
  for (const Batch& batch : DrainBatches(pipeline.get())) {
    sizes.push_back(batch.images.dim(0));
    epochs.push_back(batch.epoch);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{10, 10, 3, 10, 10, 3}));
  EXPECT_EQ(epochs, (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
}

TEST(InputPipeline, UnbufferedEpochsFollowTheShardsEpochOrder) {
  const std::vector<std::vector<int64_t>> epochs =
      UnbufferedEpochs(103, /*shard_index=*/1, /*num_shards=*/3, /*seed=*/42, /*epochs=*/2);
  ASSERT_EQ(epochs.size(), 2u);
  const std::vector<int64_t> shard = ShardIndices(103, {1, 3});
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    EXPECT_EQ(epochs[epoch], EpochOrder(shard, 42, 1, epoch)) << "epoch " << epoch;
  }
}

TEST(InputPipeline, UnbufferedShuffleDiffersBetweenEpochsAndIsReproducible) {
  const std::vector<std::vector<int64_t>> first =
      UnbufferedEpochs(200, /*shard_index=*/1, /*num_shards=*/2, /*seed=*/42, /*epochs=*/3);
  const std::vector<std::vector<int64_t>> again = UnbufferedEpochs(200, 1, 2, 42, 3);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_EQ(first, again);
  EXPECT_NE(first[0], first[1]);
  EXPECT_NE(first[1], first[2]);
  std::vector<int64_t> sorted = first[0];
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(first[0], sorted);  // actually shuffled
  EXPECT_EQ(sorted, ShardIndices(200, {1, 2}));

  const std::vector<std::vector<int64_t>> other = UnbufferedEpochs(200, 1, 2, /*seed=*/43, 3);
  ASSERT_EQ(other.size(), 3u);
  EXPECT_NE(other[0], first[0]);
}

TEST(InputPipeline, UnbufferedBatchesKeepEveryChannel) {
  // Four 2x2x3 images; image i's pixel (y, x) channel c is 48i + 3(2y + x) + c.
  ImageDataset ds;
  ds.count = 4;
  ds.rows = ds.cols = 2;
  ds.depth = 3;
  for (int i = 0; i < 4; ++i) {
    for (int p = 0; p < 12; ++p) ds.pixels.push_back(static_cast<uint8_t>(48 * i + p));
    ds.labels.push_back(i);
  }
  InputPipelineOptions opts = Options(/*batch_size=*/4, /*epochs=*/1);
  opts.seed = 3;
  auto pipeline = MakePipeline(&ds, opts);
  ASSERT_NE(pipeline, nullptr);
  const std::vector<Batch> batches = DrainBatches(pipeline.get());
  ASSERT_EQ(batches.size(), 1u);
  const Batch& batch = batches[0];
  ASSERT_EQ(batch.images.shape(), (Shape{4, 2, 2, 3}));
  for (int64_t i = 0; i < 4; ++i) {
    for (int y = 0; y < 2; ++y) {
      for (int x = 0; x < 2; ++x) {
        for (int c = 0; c < 3; ++c) {
          const int64_t at = ((i * 2 + y) * 2 + x) * 3 + c;
          const int pixel = 48 * batch.labels[i] + 3 * (2 * y + x) + c;
          EXPECT_NEAR(batch.images[at], pixel / 255.0f - 0.5f, 1e-6)
              << "image " << i << " (" << y << ", " << x << ") channel " << c;
        }
      }
    }
  }
}

TEST(InputPipeline, SameSeedAndOneReaderGiveTheSameBatches) {
  const ImageDataset ds = RandomDataset(300, 1);
  InputPipelineOptions opts =
      DistortOptions(/*batch_size=*/32, /*epochs=*/2, /*min_after_dequeue=*/50);
  opts.seed = 9;
  auto first = MakePipeline(&ds, opts);
  auto second = MakePipeline(&ds, opts);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const std::vector<Batch> a = DrainBatches(first.get());
  // The second is read slowly, so its reader runs ahead to the buffer's
  // capacity: the batches must not depend on that.
  std::vector<Batch> b;
  Batch batch;
  while (second->Next(&batch)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    b.push_back(std::move(batch));
  }
  ASSERT_EQ(a.size(), 19u);  // 600 examples in batches of 32
  ExpectSameBatches(a, b);

  opts.seed = 10;
  const std::vector<Batch> other = DrainBatches(MakePipeline(&ds, opts).get());
  ASSERT_EQ(other.size(), a.size());
  EXPECT_NE(other[0].labels, a[0].labels);
}

TEST(InputPipeline, ADatasetKeptToItsShardGivesTheWholeSplitsShardsBatches) {
  const ImageDataset whole = RandomDataset(301, 4);
  ImageDataset shard = whole;
  KeepShard({1, 3}, &shard);
  InputPipelineOptions opts =
      DistortOptions(/*batch_size=*/16, /*epochs=*/2, /*min_after_dequeue=*/40);
  opts.seed = 5;
  opts.shard = {1, 3};
  const std::vector<Batch> from_whole = DrainBatches(MakePipeline(&whole, opts).get());
  const std::vector<Batch> from_shard = DrainBatches(MakePipeline(&shard, opts).get());
  ASSERT_EQ(from_whole.size(), 13u);  // 2 epochs of 100 examples in batches of 16
  ExpectSameBatches(from_whole, from_shard);
  // Another shard's pipeline cannot read this one's examples.
  opts.shard.index = 2;
  auto other = InputPipeline::Create(&shard, opts);
  EXPECT_EQ(other.status().code(), Code::kInvalidArgument) << other.status().ToString();
  EXPECT_NE(other.status().message().find("holds shard 1 of 3"), std::string::npos)
      << other.status().ToString();
}

// Pearson correlation of channel c of a height x width x 3 output with the
// window at (top, left) of a 32x32x3 image, mirrored if `flip`.
double Correlation(const float* out, const uint8_t* image, int size, int top, int left, bool flip,
                   int c) {
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  const int n = size * size;
  for (int y = 0; y < size; ++y) {
    for (int x = 0; x < size; ++x) {
      const int sx_col = left + (flip ? size - 1 - x : x);
      const double a = out[(y * size + x) * 3 + c];
      const double b = image[((top + y) * 32 + sx_col) * 3 + c];
      sx += a, sy += b, sxx += a * a, syy += b * b, sxy += a * b;
    }
  }
  const double cov = sxy - sx * sy / n;
  const double var = (sxx - sx * sx / n) * (syy - sy * sy / n);
  return var > 0 ? cov / std::sqrt(var) : 0;
}

TEST(InputPipeline, DistortGivesStandardizedCropsOfTheExample) {
  // Ten examples with labels 0..9 name themselves.
  const ImageDataset ds = RandomDataset(10, 2);
  auto pipeline =
      MakePipeline(&ds, DistortOptions(/*batch_size=*/4, /*epochs=*/3, /*min_after_dequeue=*/5));
  ASSERT_NE(pipeline, nullptr);
  constexpr int kSize = 24 * 24 * 3;
  std::map<int32_t, std::vector<std::vector<float>>> images;  // by label
  for (const Batch& batch : DrainBatches(pipeline.get())) {
    ASSERT_EQ(batch.images.shape(), (Shape{batch.images.dim(0), 24, 24, 3}));
    for (int64_t i = 0; i < batch.images.dim(0); ++i) {
      const float* out = batch.images.data() + i * kSize;
      double sum = 0, squares = 0;
      for (int j = 0; j < kSize; ++j) sum += out[j], squares += double{out[j]} * out[j];
      const double mean = sum / kSize;
      EXPECT_NEAR(mean, 0, 1e-5);
      EXPECT_NEAR(std::sqrt(squares / kSize - mean * mean), 1, 1e-4);
      // Brightness, contrast and standardization are affine per channel with
      // a positive slope: each channel correlates perfectly with the crop's.
      const int32_t label = batch.labels[i];
      const uint8_t* image = ds.pixels.data() + label * ds.image_size();
      bool found = false;
      for (int top = 0; top <= 8 && !found; ++top) {
        for (int left = 0; left <= 8 && !found; ++left) {
          for (bool flip : {false, true}) {
            bool all = true;
            for (int c = 0; c < 3 && all; ++c) {
              all = Correlation(out, image, 24, top, left, flip, c) > 0.99999;
            }
            if (all) found = true;
          }
        }
      }
      EXPECT_TRUE(found) << "an image of example " << label << " is no crop of it";
      images[label].emplace_back(out, out + kSize);
    }
  }
  ASSERT_EQ(images.size(), 10u);
  for (const auto& [label, versions] : images) {
    ASSERT_EQ(versions.size(), 3u) << "example " << label;
    EXPECT_NE(versions[0], versions[1]) << "example " << label << " distorted alike twice";
  }
}

// The threads of this process that run at SCHED_IDLE, by id. (A thread
// just joined may still be listed for a moment: a test counts the ids that
// are new.)
std::set<pid_t> IdleThreadsOfThisProcess() {
  std::set<pid_t> idle;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
    const pid_t tid = static_cast<pid_t>(std::stol(entry.path().filename().string()));
    if (sched_getscheduler(tid) == SCHED_IDLE) idle.insert(tid);
  }
  return idle;
}

TEST(InputPipeline, IdlePriorityRunsEachOfItsThreadsAtSchedIdle) {
  const ImageDataset ds = IndexedDataset(500);
  for (const bool buffered : {true, false}) {
    for (const bool idle : {true, false}) {
      SCOPED_TRACE(std::string(buffered ? "buffered" : "unbuffered") + (idle ? ", idle" : ""));
      InputPipelineOptions opts = buffered ? BufferedOptions() : Options(16, 0);
      opts.epochs = 0;  // for ever: no thread ends before it is counted
      opts.reader_threads = 1;
      opts.idle_priority = idle;
      const std::set<pid_t> before = IdleThreadsOfThisProcess();
      auto pipeline = MakePipeline(&ds, opts);
      ASSERT_NE(pipeline, nullptr);
      // The first batch out means that each thread has taken its priority:
      // the reader before it read, the batch thread before it batched. (A
      // later batch longer in coming than this test's step between two
      // calls would hand their work on.)
      Batch batch;
      ASSERT_TRUE(pipeline->Next(&batch));
      EXPECT_EQ(batch.images.dim(0), 16);
      int started_idle = 0;
      for (const pid_t tid : IdleThreadsOfThisProcess()) started_idle += before.count(tid) == 0;
      EXPECT_EQ(started_idle, idle ? (buffered ? 2 : 1) : 0);
      EXPECT_EQ(pipeline->runs_at_idle_priority(), idle);
    }
  }
}

TEST(InputPipeline, SlowerThanTheStepAtIdlePriorityItGoesOnAtNormalPriority) {
  // A caller that takes batches back to back (a step of microseconds) and
  // one reader drawing distortions: once the batches prepared ahead are
  // gone, a batch is longer in coming than the step. Where other work takes
  // every CPU, the threads at idle priority are so; either way the input is
  // the bottleneck, and goes on at normal priority.
  const ImageDataset ds = RandomDataset(300, 1);
  InputPipelineOptions opts = DistortOptions(/*batch_size=*/32, /*epochs=*/0, 0);
  opts.idle_priority = true;
  auto pipeline = MakePipeline(&ds, opts);
  ASSERT_NE(pipeline, nullptr);
  EXPECT_TRUE(pipeline->runs_at_idle_priority());
  Batch batch;
  for (int i = 0; i < 3 * opts.batches_ahead; ++i) {
    ASSERT_TRUE(pipeline->Next(&batch)) << "batch " << i;
  }
  EXPECT_FALSE(pipeline->runs_at_idle_priority());
}

TEST(InputPipeline, WorkHandedOnToNormalPriorityGivesTheSameBatches) {
  // One reader drawing distortions: its random stream and its place in the
  // walk go on in the new threads, whenever the hand-over comes (here after
  // the second batch, or earlier where a batch was longer in coming than
  // the step between two calls).
  const ImageDataset ds = RandomDataset(300, 1);
  for (const int64_t min_after_dequeue : {50, 0}) {
    SCOPED_TRACE(min_after_dequeue == 0 ? "unbuffered" : "buffered");
    InputPipelineOptions opts = DistortOptions(/*batch_size=*/32, /*epochs=*/2, min_after_dequeue);
    opts.seed = 9;
    const std::vector<Batch> expected = DrainBatches(MakePipeline(&ds, opts).get());
    ASSERT_EQ(expected.size(), min_after_dequeue == 0 ? 20u : 19u);
    opts.idle_priority = true;
    auto pipeline = MakePipeline(&ds, opts);
    ASSERT_NE(pipeline, nullptr);
    std::vector<Batch> got(2);
    ASSERT_TRUE(pipeline->Next(&got[0]));
    ASSERT_TRUE(pipeline->Next(&got[1]));
    pipeline->RunAtNormalPriority();
    EXPECT_FALSE(pipeline->runs_at_idle_priority());
    for (Batch& batch : DrainBatches(pipeline.get())) got.push_back(std::move(batch));
    ExpectSameBatches(expected, got);
  }
}

TEST(InputPipeline, ForeverKeepsGoingAndStopsOnDestruction) {
  const ImageDataset ds = IndexedDataset(50);
  for (int64_t min_after_dequeue : {0, 20}) {
    InputPipelineOptions opts;
    opts.batch_size = 8;
    opts.min_after_dequeue = min_after_dequeue;
    opts.reader_threads = 2;
    opts.batches_ahead = 1;
    auto pipeline = MakePipeline(&ds, opts);
    ASSERT_NE(pipeline, nullptr);
    Batch batch;
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(pipeline->Next(&batch));
    EXPECT_EQ(batch.images.dim(0), 8);
    EXPECT_GE(batch.epoch, 14);  // 800 examples of 50 per epoch
    pipeline.reset();            // every thread is blocked on a full queue
    // Destroyed while still starting up.
    MakePipeline(&ds, opts).reset();
  }
}

TEST(InputPipeline, ResolvesDefaults) {
  const ImageDataset ds = RandomDataset(4, 3);
  InputPipelineOptions opts;
  opts.batch_size = 2;
  opts.min_after_dequeue = 1;
  auto pipeline = MakePipeline(&ds, opts);
  ASSERT_NE(pipeline, nullptr);
  EXPECT_EQ(pipeline->options().height, 32);
  EXPECT_EQ(pipeline->options().width, 32);
  EXPECT_EQ(pipeline->options().capacity, 1 + 3 * 2);
}

TEST(InputPipeline, RejectsBadOptions) {
  const ImageDataset ds = RandomDataset(4, 4);
  struct Case {
    const char* message;
    void (*change)(InputPipelineOptions*);
  };
  const Case cases[] = {
      {"batch_size must be positive", [](InputPipelineOptions* o) { o->batch_size = 0; }},
      {"shard 2 of 2 is not one: its index must be in 0..1",
       [](InputPipelineOptions* o) {
         o->shard = {2, 2};
       }},
      {"shard 0 of 0 is not one", [](InputPipelineOptions* o) { o->shard.num_shards = 0; }},
      {"shard 4 of 5 has no examples",
       [](InputPipelineOptions* o) {
         o->shard = {4, 5};
       }},
      {"epochs must be >= 0", [](InputPipelineOptions* o) { o->epochs = -1; }},
      {"preprocessing 7 is not SCALE, DISTORT or PIXEL_IDS",
       [](InputPipelineOptions* o) {
         o->preprocessing = static_cast<proto::InputSpec::Preprocessing>(7);
       }},
      {"output height and width must be >= 0", [](InputPipelineOptions* o) { o->height = -1; }},
      {"SCALE preprocessing needs an output height x width of the images' 32x32, got 24x32",
       [](InputPipelineOptions* o) { o->height = 24; }},
      {"output height x width 33x24 is larger than the images' 32x32",
       [](InputPipelineOptions* o) {
         o->preprocessing = proto::InputSpec::DISTORT, o->height = 33, o->width = 24;
       }},
      {"min_after_dequeue must be >= 0",
       [](InputPipelineOptions* o) { o->min_after_dequeue = -1; }},
      {"capacity must be >= 0", [](InputPipelineOptions* o) { o->capacity = -5; }},
      {"min_after_dequeue 10 must be below capacity 10",
       [](InputPipelineOptions* o) { o->min_after_dequeue = 10, o->capacity = 10; }},
      {"reader_threads must be positive", [](InputPipelineOptions* o) { o->reader_threads = 0; }},
      {"batches_ahead must be positive", [](InputPipelineOptions* o) { o->batches_ahead = 0; }},
  };
  for (const Case& c : cases) {
    InputPipelineOptions opts;
    c.change(&opts);
    StatusOr<std::unique_ptr<InputPipeline>> pipeline = InputPipeline::Create(&ds, opts);
    ASSERT_FALSE(pipeline.ok()) << c.message;
    EXPECT_EQ(pipeline.status().code(), Code::kInvalidArgument);
    EXPECT_NE(pipeline.status().message().find(c.message), std::string::npos)
        << pipeline.status().message();
  }
  EXPECT_EQ(InputPipeline::Create(nullptr, {}).status().code(), Code::kInvalidArgument);
}

// One 4x4x1 image whose pixel (y, x) is 4y + x, and a second of 200s.
ImageDataset RampDataset() {
  ImageDataset ds;
  ds.count = 2;
  ds.rows = ds.cols = 4;
  for (int p = 0; p < 16; ++p) ds.pixels.push_back(static_cast<uint8_t>(p));
  for (int p = 0; p < 16; ++p) ds.pixels.push_back(200);
  ds.labels = {0, 1};
  return ds;
}

TEST(PrepareEvalImages, DistortTakesTheCentralCropStandardized) {
  const ImageDataset ds = RampDataset();
  Tensor out({3});
  PS_ASSERT_OK(PrepareEvalImages(ds, 0, 2, proto::InputSpec::DISTORT, 2, 2, &out));
  ASSERT_EQ(out.shape(), (Shape{2, 2, 2, 1}));
  // The central 2x2 of the ramp: 5 6 / 9 10, mean 7.5, deviations
  // -2.5 -1.5 1.5 2.5, population stddev sqrt(17 / 4).
  const float s = std::sqrt(17.0f / 4);
  const float expected[] = {-2.5f / s, -1.5f / s, 1.5f / s, 2.5f / s};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
  // A flat image has stddev 0: divided by 1 / sqrt(4) instead, all zeros.
  for (int i = 4; i < 8; ++i) EXPECT_EQ(out[i], 0) << i;

  // One image from the middle of the range, 1x3 (rows crop 4 -> 1 at offset
  // 1, cols 4 -> 3 at offset 0): 4 5 6.
  PS_ASSERT_OK(PrepareEvalImages(ds, 0, 1, proto::InputSpec::DISTORT, 1, 3, &out));
  ASSERT_EQ(out.shape(), (Shape{1, 1, 3, 1}));
  const float s3 = std::sqrt(2.0f / 3);
  EXPECT_NEAR(out[0], -1 / s3, 1e-6);
  EXPECT_NEAR(out[1], 0, 1e-6);
  EXPECT_NEAR(out[2], 1 / s3, 1e-6);
}

TEST(PrepareEvalImages, ScaleNormalizes) {
  const ImageDataset ds = RampDataset();
  Tensor out;
  PS_ASSERT_OK(PrepareEvalImages(ds, 1, 1, proto::InputSpec::SCALE, 0, 0, &out));
  ASSERT_EQ(out.shape(), (Shape{1, 4, 4, 1}));
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(out[i], 200 / 255.0f - 0.5f, 1e-6);
  PS_ASSERT_OK(PrepareEvalImages(ds, 0, 2, proto::InputSpec::SCALE, 4, 4, &out));
  EXPECT_NEAR(out[5], 5 / 255.0f - 0.5f, 1e-6);
}

TEST(PrepareEvalImages, RejectsBadArguments) {
  const ImageDataset ds = RampDataset();
  Tensor out({7});
  struct Case {
    int64_t begin, count;
    proto::InputSpec::Preprocessing preprocessing;
    int height, width;
    const char* message;
  };
  const Case cases[] = {
      {1, 2, proto::InputSpec::SCALE, 4, 4, "images [1, 3) are not within the dataset's 2"},
      {-1, 1, proto::InputSpec::SCALE, 4, 4, "images [-1, 0)"},
      {0, -1, proto::InputSpec::SCALE, 4, 4, "images [0, -1)"},
      {0, 1, proto::InputSpec::SCALE, 2, 2, "SCALE preprocessing needs"},
      {0, 1, proto::InputSpec::DISTORT, -2, 2, "must be >= 0"},
      {0, 1, static_cast<proto::InputSpec::Preprocessing>(5), 2, 2, "preprocessing 5"},
  };
  for (const Case& c : cases) {
    const Status status =
        PrepareEvalImages(ds, c.begin, c.count, c.preprocessing, c.height, c.width, &out);
    EXPECT_EQ(status.code(), Code::kInvalidArgument) << c.message;
    EXPECT_NE(status.message().find(c.message), std::string::npos) << status.message();
    EXPECT_EQ(out.shape(), Shape{7});  // untouched
  }
}

}  // namespace
}  // namespace data
}  // namespace pstrain

namespace pstrain {
namespace data {
namespace {

// The pixels a PIXEL_IDS example holds, from its ids and weights.
std::vector<int64_t> PixelsOf(const RaggedIds& ids, int64_t b, int64_t image_size) {
  std::vector<int64_t> pixels(image_size, 0);
  for (int64_t j = ids.row_splits[b]; j < ids.row_splits[b + 1]; ++j) {
    const int64_t index = ids.values[j] / kPixelLevels;
    const int64_t p = std::lround(ids.weights[j] * 255.0f);
    EXPECT_EQ(ids.values[j] % kPixelLevels, p * kPixelLevels / 256) << "id " << ids.values[j];
    EXPECT_GT(p, 0) << "a zero pixel gives no id";
    pixels[index] = p;
  }
  return pixels;
}

TEST(InputPipeline, PixelIdsGiveEachExampleAsTheIdsOfItsPixels) {
  const ImageDataset ds = IndexedDataset(301);
  for (int64_t min_after_dequeue : {0, 40}) {
    InputPipelineOptions opts = BufferedOptions();
    opts.min_after_dequeue = min_after_dequeue;
    opts.preprocessing = proto::InputSpec::PIXEL_IDS;
    opts.epochs = 2;
    auto pipeline = MakePipeline(&ds, opts);
    ASSERT_NE(pipeline, nullptr);
    std::vector<int> seen(301, 0);
    for (const Batch& batch : DrainBatches(pipeline.get())) {
      EXPECT_EQ(batch.images.size(), 0) << "ids, no images";
      ASSERT_EQ(batch.sparse.count(kPixelIdsFeature), 1u);
      const RaggedIds& ids = batch.sparse.at(kPixelIdsFeature);
      PS_ASSERT_OK(ids.Check("pixel_ids"));
      ASSERT_EQ(ids.batch(), static_cast<int64_t>(batch.labels.size()));
      for (int64_t b = 0; b < ids.batch(); ++b) {
        const std::vector<int64_t> p = PixelsOf(ids, b, ds.image_size());
        const int64_t example = p[0] + 256 * p[1];
        ASSERT_LT(example, 301);
        EXPECT_EQ(p[2], (7 * example) % 256);
        EXPECT_EQ(p[3], 255 - (7 * example) % 256);
        EXPECT_EQ(batch.labels[b], example % 10);
        ++seen[example];
      }
    }
    EXPECT_EQ(seen, std::vector<int>(301, 2)) << "min_after_dequeue " << min_after_dequeue;
  }
  // Evaluation takes the same ids, in order.
  std::map<std::string, RaggedIds> eval;
  PS_ASSERT_OK(PrepareEvalPixelIds(ds, 10, 5, &eval));
  const RaggedIds& ids = eval.at(kPixelIdsFeature);
  ASSERT_EQ(ids.batch(), 5);
  for (int64_t b = 0; b < 5; ++b) EXPECT_EQ(PixelsOf(ids, b, 4)[0], 10 + b);
  EXPECT_EQ(PixelIdVocabulary(ds), 4 * kPixelLevels);
  EXPECT_EQ(PrepareEvalPixelIds(ds, 300, 2, &eval).code(), Code::kInvalidArgument);
  Tensor images;
  EXPECT_EQ(PrepareEvalImages(ds, 0, 2, proto::InputSpec::PIXEL_IDS, 0, 0, &images).code(),
            Code::kInvalidArgument);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
