// InputPipeline: one worker's training input with preprocessing and
// TensorFlow's shuffle buffer (tf.train.shuffle_batch, as cifar10_input.py
// builds it); PrepareEvalImages: the matching evaluation input.
//
// The shard holds the examples whose index i satisfies
// i % num_shards == shard_index, walked epoch after epoch, each epoch in a
// fresh order (data/shard_order.h's EpochOrder); a dataset that holds that
// shard only (KeepShard, data/mnist_dataset.h) gives the same batches.
// Preprocessing (proto::InputSpec::Preprocessing) turns each image into the
// model's input, height x width x depth floats:
//   SCALE:   pixel / 255 - 0.5; the images must be height x width.
//   DISTORT: data/distortions.h's training path in TensorFlow's ranges:
//            random height x width crop, left-right flip, brightness,
//            contrast, per-image standardization.
//   PIXEL_IDS: no images; each batch's `sparse` holds the examples as
//            data/pixel_ids.h's ids (height and width are not used).
//
// With min_after_dequeue > 0, `reader_threads` threads walk the shard,
// preprocess and enqueue examples into a ShuffleBuffer
// (data/shuffle_buffer.h) of `capacity`, and one batching thread dequeues
// batch_size examples at a time into batches, keeping `batches_ahead` ready.
// Batches then span epochs as the buffer mixes them; every batch is full but
// the last one of the last epoch, and each epoch's examples all come out
// exactly once. With one reader thread the batches are a function of the
// options alone (the same on every run); more readers enqueue in an order
// thread timing decides.
//
// With min_after_dequeue 0 there is no buffer: one thread preprocesses each
// epoch's order straight into batches, in that order; batches never span
// epochs and the last of every epoch may be smaller; reader_threads and
// capacity are not used.
//
// Random draws (DISTORT) come from std::mt19937_64 streams seeded from (seed,
// shard_index, reader): shards and readers draw differently.
//
// Thread safety: Next may be called from any thread; calls are serialized.
// With idle_priority, from a thread at normal priority: the threads it may
// start (RunAtNormalPriority) take its policy. examples_per_epoch from any
// thread. The destructor cancels the buffer, stops and joins every thread;
// it must not run concurrently with Next or RunAtNormalPriority.
#ifndef PSTRAIN_DATA_INPUT_PIPELINE_H_
#define PSTRAIN_DATA_INPUT_PIPELINE_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "data/batch_source.h"
#include "data/distortions.h"
#include "data/mnist_dataset.h"
#include "data/shard_order.h"
#include "data/shuffle_buffer.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace data {

struct InputPipelineOptions {
  int batch_size = 128;
  Shard shard;
  uint64_t seed = 0;
  int64_t epochs = 0;  // 0: for ever
  proto::InputSpec::Preprocessing preprocessing = proto::InputSpec::SCALE;
  // The model's input; 0: the images' own rows (height) or cols (width).
  int height = 0, width = 0;
  // Examples that stay in the shuffle buffer after each dequeue; 0: no buffer.
  int64_t min_after_dequeue = 0;
  // Examples the buffer holds at most; 0: min_after_dequeue + 3 * batch_size,
  // as TensorFlow's cifar10 tutorial.
  int64_t capacity = 0;
  int reader_threads = 1;  // threads that preprocess into the buffer
  int batches_ahead = 4;   // batches prepared ahead of Next
  // The pipeline's threads start at SCHED_IDLE (core/thread_priority.h):
  // where the computation takes every CPU, they prepare the batches ahead in
  // what it leaves (cluster/cpu_share.h's ChooseInputPriority). Starved
  // (a batch longer in coming than the caller's step), they hand their work
  // to threads at normal priority (RunAtNormalPriority).
  bool idle_priority = false;
};

class InputPipeline : public BatchSource {
 public:
  // Starts the threads. `ds` is borrowed and must outlive the pipeline.
  // InvalidArgument, naming the option, for a null or empty dataset,
  // batch_size < 1, a shard outside [0, num_shards) or with no examples, a
  // dataset that holds another shard,
  // epochs < 0, an unknown preprocessing, height or width < 0, an output larger
  // than the images, SCALE with an output shape other than the images',
  // min_after_dequeue < 0, capacity < 0 or min_after_dequeue >= capacity,
  // reader_threads < 1 or batches_ahead < 1.
  static StatusOr<std::unique_ptr<InputPipeline>> Create(const ImageDataset* ds,
                                                         const InputPipelineOptions& opts);
  ~InputPipeline() override;

  InputPipeline(const InputPipeline&) = delete;
  InputPipeline& operator=(const InputPipeline&) = delete;

  // Blocks until a batch is ready and moves it into `out`: images
  // [n, height, width, depth], labels, and the latest epoch among its
  // examples. Returns false once the last batch has been taken (never, if
  // epochs is 0).
  bool Next(Batch* out) override;

  // From now on, the pipeline's work goes on in threads at normal priority,
  // started from the calling thread (which must run at normal priority):
  // each thread at idle priority leaves its work (its place in the walk,
  // its random stream) to one of them after the example or batch at hand,
  // so the batches are the same as without idle_priority. Next calls it
  // when a batch, after the first, is longer in coming than the caller's
  // step since the batch before: the threads at idle priority are starved
  // (other work on the host takes every CPU). Once; later calls do nothing.
  void RunAtNormalPriority();
  // Whether its threads run at idle priority: asked for, granted by the
  // kernel, and not yet handed on.
  bool runs_at_idle_priority() const { return !normal_ && !idle_refused_; }

  // Number of examples in this shard.
  int64_t examples_per_epoch() const override { return static_cast<int64_t>(shard_.size()); }

  // The options in effect (height, width and capacity resolved).
  const InputPipelineOptions& options() const { return opts_; }

 private:
  InputPipeline(const ImageDataset* ds, const InputPipelineOptions& opts,
                std::unique_ptr<ShuffleBuffer> buffer);

  // The next example a reader should read: false once the last epoch is
  // walked.
  bool Claim(int64_t* example, int64_t* epoch);
  // Writes example `index` preprocessed at `dst` (height * width * depth
  // floats), drawing from `rng` for DISTORT.
  void Preprocess(int64_t index, std::mt19937_64* rng, float* dst) const;
  // A thread's work, kept apart from the thread so that another can carry
  // it on (RunAtNormalPriority): a reader's random stream, or the direct
  // loop's place in its walk and its stream.
  struct Work {
    std::mutex mu;  // held by the thread doing a unit of it (an example, a batch)
    std::mt19937_64 rng;
    bool done = false;  // ended: no thread takes it up again
    int64_t epoch = 0;  // the direct loop's epoch, its order and next batch's start
    std::vector<int64_t> order;
    size_t begin = 0;
  };
  // Starts the threads of every Work: the readers' and the batching
  // thread's, or the direct loop's.
  void StartThreads(bool idle);
  // Each unit of a Work first holds its mutex and asks this: false when
  // the Work is done or (for a thread started at idle priority) carried on
  // at normal priority.
  bool TakesUp(const Work& work, bool idle) const;
  void ReadLoop(Work* work, bool idle);    // a reader (with a buffer)
  void BatchLoop(Work* work, bool idle);   // the batching (with a buffer)
  void DirectLoop(Work* work, bool idle);  // the only work without a buffer
  // Called first by a thread started at idle priority.
  void TakeIdlePriority();
  // An empty batch for n examples: images, or ids for PIXEL_IDS.
  Batch NewBatch(int64_t n) const;
  // The batch of examples dequeued from the buffer.
  Batch BatchOf(const std::vector<Example>& examples) const;
  // Waits for room, then adds a batch for Next; false if stopping.
  bool Push(Batch batch);
  // Marks the last batch pushed.
  void Finish();

  // Constant after construction.
  const ImageDataset* const ds_;
  const InputPipelineOptions opts_;
  const std::vector<int64_t> shard_;  // this shard's example indices, ascending
  const DistortionParams distortion_;
  const int64_t example_size_;                   // height * width * depth
  const std::unique_ptr<ShuffleBuffer> buffer_;  // null without one; thread-safe

  // The walk of the shard that readers share.
  std::mutex walk_mu_;
  std::vector<int64_t> order_;  // guarded by walk_mu_; the current epoch's order
  int64_t epoch_ = 0;           // guarded by walk_mu_
  size_t position_ = 0;         // guarded by walk_mu_; next index into order_
  int readers_left_ = 0;        // guarded by walk_mu_; the last one closes the buffer

  // Batches ready for Next.
  std::mutex mu_;
  std::condition_variable not_empty_;
  std::condition_variable not_full_;
  std::deque<Batch> batches_;  // guarded by mu_
  bool stopping_ = false;      // guarded by mu_; set by the destructor
  bool done_ = false;          // guarded by mu_; the last batch has been pushed

  int64_t delivered_ = 0;                             // guarded by mu_; batches Next has handed out
  std::chrono::steady_clock::time_point last_taken_;  // guarded by mu_; by Next

  // The readers' works then the batching's, or the direct loop's; made in
  // the constructor.
  std::vector<std::unique_ptr<Work>> works_;
  std::atomic<bool> normal_;  // the works go on at normal priority
  // The kernel refused SCHED_IDLE: the threads run at normal priority as
  // they are, and nothing is handed on.
  std::atomic<bool> idle_refused_{false};
  // Started by the constructor and by RunAtNormalPriority (both on the
  // owner's side of Next), joined by the destructor.
  std::vector<std::thread> threads_;
};

// The evaluation input: images [begin, begin + count) of `ds` into `out`,
// resized to [count, height, width, depth] (0 for height or width: the
// images' own). SCALE: pixel / 255 - 0.5 (NormalizeImages), the images must
// be height x width. DISTORT: central crop (or zero pad) to height x width,
// then per-image standardization (PrepareForEvaluation). InvalidArgument for
// a range outside the dataset, a negative height or width, an unknown
// preprocessing or SCALE with another shape; `out` is unchanged then.
Status PrepareEvalImages(const ImageDataset& ds, int64_t begin, int64_t count,
                         proto::InputSpec::Preprocessing preprocessing, int height, int width,
                         Tensor* out);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_INPUT_PIPELINE_H_
