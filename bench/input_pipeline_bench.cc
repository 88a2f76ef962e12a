// input_pipeline_bench: images per second that the cifar10 training input
// (data/input_pipeline.h) delivers from one reader thread.
//
// A 50,000-image 32x32x3 dataset of random pixels (CIFAR-10's training set
// size and shape) goes through DISTORT preprocessing to 24x24 (random crop,
// flip, brightness, contrast, standardization), a shuffle buffer with
// min_after_dequeue 20000 (docs/MODELS.md), batches of 128. The clock starts once
// the first batch is out, that is once the buffer holds min_after_dequeue + 1
// examples, and stops after --batches more; the consumer takes batches as
// fast as they come, so the figure is the pipeline's own rate. Also times the
// per-image path alone on one thread: the fused DistortForTrainingInto and,
// for comparison, the FloatImage path (ToFloatImage + DistortForTraining).
// Prints one line of JSON.
#include <gflags/gflags.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "data/distortions.h"
#include "data/input_pipeline.h"

DEFINE_int64(images, 50000, "images in the dataset");
DEFINE_int32(batch, 128, "images per batch");
DEFINE_int64(min_after_dequeue, 20000, "shuffle buffer floor");
DEFINE_int32(reader_threads, 1, "threads that preprocess into the buffer");
DEFINE_int32(batches, 3000, "timed batches, after the buffer has filled");
DEFINE_int32(single_images, 20000, "images for the single-thread per-image timings");

namespace pstrain {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

int Run() {
  data::ImageDataset ds;
  ds.count = FLAGS_images;
  ds.rows = ds.cols = 32;
  ds.depth = 3;
  ds.pixels.resize(static_cast<size_t>(ds.count * ds.image_size()));
  std::mt19937_64 rng(1);
  for (size_t i = 0; i < ds.pixels.size(); i += 8) {
    const uint64_t bits = rng();
    for (size_t b = 0; b < 8 && i + b < ds.pixels.size(); ++b) {
      ds.pixels[i + b] = static_cast<uint8_t>(bits >> (8 * b));
    }
  }
  for (int64_t i = 0; i < ds.count; ++i) ds.labels.push_back(static_cast<int32_t>(i % 10));

  // The per-image path alone, one thread.
  data::DistortionParams params;  // 24x24, TensorFlow's ranges
  std::vector<data::DistortionDraw> draws;
  for (int i = 0; i < FLAGS_single_images; ++i) {
    draws.push_back(data::DrawDistortion(params, ds.rows, ds.cols, &rng));
  }
  std::vector<float> out(24 * 24 * 3);
  float sink = 0;
  Clock::time_point start = Clock::now();
  for (int i = 0; i < FLAGS_single_images; ++i) {
    data::DistortForTrainingInto(ds, i % ds.count, params, draws[i], out.data());
    sink += out[i % out.size()];
  }
  const double fused_s = Seconds(start);
  start = Clock::now();
  for (int i = 0; i < FLAGS_single_images; ++i) {
    const data::FloatImage img =
        data::DistortForTraining(data::ToFloatImage(ds, i % ds.count), params, draws[i]);
    sink += img.values[i % img.values.size()];
  }
  const double reference_s = Seconds(start);

  // The pipeline.
  data::InputPipelineOptions opts;
  opts.batch_size = FLAGS_batch;
  opts.seed = 1;
  opts.preprocessing = proto::InputSpec::DISTORT;
  opts.height = opts.width = 24;
  opts.min_after_dequeue = FLAGS_min_after_dequeue;
  opts.reader_threads = FLAGS_reader_threads;
  start = Clock::now();
  auto pipeline = data::InputPipeline::Create(&ds, opts);
  if (!pipeline.ok()) {
    std::fprintf(stderr, "%s\n", pipeline.status().ToString().c_str());
    return 1;
  }
  data::Batch batch;
  if (!(*pipeline)->Next(&batch)) return 1;
  const double fill_s = Seconds(start);
  int64_t images = 0;
  start = Clock::now();
  for (int b = 0; b < FLAGS_batches; ++b) {
    if (!(*pipeline)->Next(&batch)) return 1;
    images += batch.images.dim(0);
    sink += batch.images[0];
  }
  const double run_s = Seconds(start);
  std::printf(
      "{\"bench\":\"input_pipeline\",\"images\":%lld,\"batch\":%d,\"min_after_dequeue\":%lld,"
      "\"reader_threads\":%d,\"fill_s\":%.3f,\"timed_batches\":%d,\"timed_s\":%.3f,"
      "\"imgs_per_s\":%.0f,\"per_image_us\":{\"fused\":%.2f,\"float_image\":%.2f},"
      "\"sink\":%g}\n",
      static_cast<long long>(FLAGS_images), FLAGS_batch,
      static_cast<long long>(FLAGS_min_after_dequeue), FLAGS_reader_threads, fill_s, FLAGS_batches,
      run_s, images / run_s, 1e6 * fused_s / FLAGS_single_images,
      1e6 * reference_s / FLAGS_single_images, sink);
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_images < 1 || FLAGS_batch < 1 || FLAGS_batches < 1 || FLAGS_single_images < 1 ||
      FLAGS_reader_threads < 1 || FLAGS_min_after_dequeue < 0) {
    std::fprintf(stderr,
                 "--images, --batch, --batches, --single_images and --reader_threads "
                 "must be positive, --min_after_dequeue >= 0\n");
    return 1;
  }
  return pstrain::Run();
}
