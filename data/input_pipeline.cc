#include "data/input_pipeline.h"

#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "core/thread_priority.h"
#include "data/pixel_ids.h"
#include "data/shard_order.h"

namespace pstrain {
namespace data {
namespace {

std::string Size(int height, int width) {
  return std::to_string(height) + "x" + std::to_string(width);
}

// RNG streams of one shard: 0 for the shuffle buffer, 1 + r for reader r.
uint64_t ShardStreamSeed(const InputPipelineOptions& opts, uint64_t stream) {
  return StreamSeed(StreamSeed(opts.seed, static_cast<uint64_t>(opts.shard.index)), stream);
}

DistortionParams DistortionFor(int height, int width) {
  DistortionParams params;  // TensorFlow's ranges
  params.crop_height = height;
  params.crop_width = width;
  return params;
}

// InvalidArgument naming option `name` unless `value` >= 1.
Status CheckPositive(const char* name, int64_t value) {
  if (value >= 1) return OkStatus();
  return InvalidArgument(std::string(name) + " must be positive, got " + std::to_string(value));
}

// InvalidArgument naming option `name` unless `value` >= 0; `zero` says what
// 0 stands for.
Status CheckNotNegative(const char* name, int64_t value, const char* zero) {
  if (value >= 0) return OkStatus();
  return InvalidArgument(std::string(name) + " must be >= 0 (0: " + zero + "), got " +
                         std::to_string(value));
}

// Resolves the output shape (0: the images') and checks it against the
// preprocessing.
Status CheckOutputShape(const ImageDataset& ds, proto::InputSpec::Preprocessing preprocessing,
                        int* height, int* width) {
  if (!proto::InputSpec::Preprocessing_IsValid(preprocessing)) {
    return InvalidArgument("preprocessing " + std::to_string(static_cast<int>(preprocessing)) +
                           " is not SCALE, DISTORT or PIXEL_IDS");
  }
  if (*height < 0 || *width < 0) {
    return InvalidArgument("output height and width must be >= 0 (0: the images'), got " +
                           Size(*height, *width));
  }
  if (*height == 0) *height = ds.rows;
  if (*width == 0) *width = ds.cols;
  if (preprocessing == proto::InputSpec::SCALE && (*height != ds.rows || *width != ds.cols)) {
    return InvalidArgument("SCALE preprocessing needs an output height x width of the images' " +
                           Size(ds.rows, ds.cols) + ", got " + Size(*height, *width));
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::unique_ptr<InputPipeline>> InputPipeline::Create(const ImageDataset* ds,
                                                               const InputPipelineOptions& opts) {
  if (ds == nullptr) return InvalidArgument("InputPipeline needs a dataset");
  PS_RETURN_IF_ERROR(CheckPositive("batch_size", opts.batch_size));
  PS_RETURN_IF_ERROR(CheckShard(opts.shard));
  if (!ds->shard.whole() && ds->shard != opts.shard) {
    return InvalidArgument("the dataset holds " + ds->shard.ToString() + ", not " +
                           opts.shard.ToString());
  }
  if (ds->shard.whole() ? ds->count <= opts.shard.index : ds->count == 0) {
    return InvalidArgument(opts.shard.ToString() + " has no examples: the dataset has " +
                           std::to_string(ds->count));
  }
  PS_RETURN_IF_ERROR(CheckNotNegative("epochs", opts.epochs, "for ever"));
  InputPipelineOptions resolved = opts;
  PS_RETURN_IF_ERROR(CheckOutputShape(*ds, opts.preprocessing, &resolved.height, &resolved.width));
  if (resolved.height > ds->rows || resolved.width > ds->cols) {
    return InvalidArgument("output height x width " + Size(resolved.height, resolved.width) +
                           " is larger than the images' " + Size(ds->rows, ds->cols));
  }
  if (opts.preprocessing == proto::InputSpec::DISTORT) {
    PS_RETURN_IF_ERROR(
        CheckDistortionParams(DistortionFor(resolved.height, resolved.width), ds->rows, ds->cols));
  }
  PS_RETURN_IF_ERROR(
      CheckNotNegative("min_after_dequeue", opts.min_after_dequeue, "no shuffle buffer"));
  PS_RETURN_IF_ERROR(
      CheckNotNegative("capacity", opts.capacity, "min_after_dequeue + 3 * batch_size"));
  if (opts.capacity == 0) resolved.capacity = opts.min_after_dequeue + 3 * int64_t{opts.batch_size};
  if (opts.min_after_dequeue > 0 && opts.min_after_dequeue >= resolved.capacity) {
    return InvalidArgument("min_after_dequeue " + std::to_string(opts.min_after_dequeue) +
                           " must be below capacity " + std::to_string(resolved.capacity));
  }
  PS_RETURN_IF_ERROR(CheckPositive("reader_threads", opts.reader_threads));
  PS_RETURN_IF_ERROR(CheckPositive("batches_ahead", opts.batches_ahead));
  std::unique_ptr<ShuffleBuffer> buffer;
  if (resolved.min_after_dequeue > 0) {
    StatusOr<std::unique_ptr<ShuffleBuffer>> created = ShuffleBuffer::Create(
        resolved.capacity, resolved.min_after_dequeue, ShardStreamSeed(resolved, 0));
    if (!created.ok()) return created.status();
    buffer = std::move(created).value();
  }
  return std::unique_ptr<InputPipeline>(new InputPipeline(ds, resolved, std::move(buffer)));
}

InputPipeline::InputPipeline(const ImageDataset* ds, const InputPipelineOptions& opts,
                             std::unique_ptr<ShuffleBuffer> buffer)
    : ds_(ds),
      opts_(opts),
      // A dataset that is the shard (KeepShard) is walked whole, in the
      // shard's order: the same examples as the shard of the whole split.
      shard_(ShardIndices(ds->count, ds->shard.whole() ? opts.shard : Shard())),
      distortion_(DistortionFor(opts.height, opts.width)),
      example_size_(opts.preprocessing == proto::InputSpec::PIXEL_IDS
                        ? 0
                        : int64_t{opts.height} * opts.width * ds->depth),
      buffer_(std::move(buffer)),
      normal_(!opts.idle_priority) {
  if (buffer_ == nullptr) {
    auto work = std::make_unique<Work>();
    work->rng.seed(ShardStreamSeed(opts_, 1));
    work->order = EpochOrder(shard_, opts_.seed, opts_.shard.index, 0);
    works_.push_back(std::move(work));
  } else {
    order_ = EpochOrder(shard_, opts_.seed, opts_.shard.index, 0);
    readers_left_ = opts_.reader_threads;
    for (int r = 0; r < opts_.reader_threads; ++r) {
      works_.push_back(std::make_unique<Work>());
      works_.back()->rng.seed(ShardStreamSeed(opts_, 1 + static_cast<uint64_t>(r)));
    }
    works_.push_back(std::make_unique<Work>());  // the batching's (draws nothing)
  }
  StartThreads(opts_.idle_priority);
}

InputPipeline::~InputPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  not_full_.notify_all();
  if (buffer_ != nullptr) buffer_->Cancel();
  for (std::thread& t : threads_) t.join();
}

void InputPipeline::StartThreads(bool idle) {
  if (buffer_ == nullptr) {
    threads_.emplace_back([this, idle] { DirectLoop(works_[0].get(), idle); });
    return;
  }
  for (int r = 0; r < opts_.reader_threads; ++r) {
    threads_.emplace_back([this, r, idle] { ReadLoop(works_[r].get(), idle); });
  }
  threads_.emplace_back([this, idle] { BatchLoop(works_.back().get(), idle); });
}

void InputPipeline::RunAtNormalPriority() {
  if (normal_.exchange(true)) return;
  StartThreads(/*idle=*/false);
}

bool InputPipeline::Next(Batch* out) {
  std::unique_lock<std::mutex> lock(mu_);
  const auto ready = [this] { return !batches_.empty() || done_; };
  // At idle priority, a batch that is longer in coming than the caller's
  // step (since it took the last one) means that the threads are starved:
  // the input has become the step's bottleneck.
  const auto asked = std::chrono::steady_clock::now();
  if (runs_at_idle_priority() && delivered_ > 0 &&
      !not_empty_.wait_for(lock, asked - last_taken_, ready)) {
    LOG(INFO) << "input: a batch took longer than a step at idle priority (other work takes "
                 "every CPU); its threads go on at normal priority";
    lock.unlock();
    RunAtNormalPriority();
    lock.lock();
  }
  not_empty_.wait(lock, ready);
  if (batches_.empty()) return false;
  *out = std::move(batches_.front());
  batches_.pop_front();
  ++delivered_;
  last_taken_ = std::chrono::steady_clock::now();
  not_full_.notify_one();
  return true;
}

bool InputPipeline::Claim(int64_t* example, int64_t* epoch) {
  std::lock_guard<std::mutex> lock(walk_mu_);
  if (position_ == order_.size()) {
    if (opts_.epochs != 0 && epoch_ + 1 >= opts_.epochs) return false;
    ++epoch_;
    order_ = EpochOrder(shard_, opts_.seed, opts_.shard.index, epoch_);
    position_ = 0;
  }
  *example = order_[position_++];
  *epoch = epoch_;
  return true;
}

void InputPipeline::Preprocess(int64_t index, std::mt19937_64* rng, float* dst) const {
  if (opts_.preprocessing == proto::InputSpec::PIXEL_IDS) return;  // made per batch
  if (opts_.preprocessing == proto::InputSpec::SCALE) {
    NormalizeImage(*ds_, index, dst);
    return;
  }
  const DistortionDraw draw = DrawDistortion(distortion_, ds_->rows, ds_->cols, rng);
  DistortForTrainingInto(*ds_, index, distortion_, draw, dst);
}

void InputPipeline::TakeIdlePriority() {
  const Status s = RunThisThreadAtIdlePriority();
  // Each thread is refused alike: one line says it.
  if (!s.ok() && !idle_refused_.exchange(true)) {
    LOG(WARNING) << "input at normal priority: " << s.ToString();
  }
}

bool InputPipeline::TakesUp(const Work& work, bool idle) const {
  return !work.done && !(idle && normal_);
}

void InputPipeline::ReadLoop(Work* work, bool idle) {
  if (idle) TakeIdlePriority();
  for (;;) {
    std::lock_guard<std::mutex> unit(work->mu);
    if (!TakesUp(*work, idle)) return;
    int64_t index, epoch;
    if (!Claim(&index, &epoch)) {  // the walk is over
      work->done = true;
      break;
    }
    Example example;
    example.values.resize(static_cast<size_t>(example_size_));
    Preprocess(index, &work->rng, example.values.data());
    example.label = ds_->labels[index];
    example.index = index;
    example.epoch = epoch;
    if (!buffer_->Enqueue(std::move(example)).ok()) {  // cancelled
      work->done = true;
      return;
    }
  }
  bool last;
  {
    std::lock_guard<std::mutex> lock(walk_mu_);
    last = --readers_left_ == 0;
  }
  if (last) buffer_->Close();
}

void InputPipeline::BatchLoop(Work* work, bool idle) {
  if (idle) TakeIdlePriority();
  std::vector<Example> examples;
  examples.reserve(static_cast<size_t>(opts_.batch_size));
  for (;;) {
    std::lock_guard<std::mutex> unit(work->mu);
    if (!TakesUp(*work, idle)) return;
    examples.clear();
    const Status status = buffer_->DequeueUpTo(opts_.batch_size, &examples);
    if (status.code() == Code::kOutOfRange) {  // the last batch is out
      work->done = true;
      break;
    }
    if (!status.ok() || !Push(BatchOf(examples))) {  // cancelled, or stopping
      work->done = true;
      return;
    }
  }
  Finish();
}

Batch InputPipeline::BatchOf(const std::vector<Example>& examples) const {
  const int64_t n = static_cast<int64_t>(examples.size());
  Batch batch = NewBatch(n);
  for (int64_t i = 0; i < n; ++i) {
    if (opts_.preprocessing == proto::InputSpec::PIXEL_IDS) {
      AppendPixelIds(*ds_, examples[i].index, &batch.sparse[kPixelIdsFeature]);
    } else {
      std::memcpy(batch.images.data() + i * example_size_, examples[i].values.data(),
                  static_cast<size_t>(example_size_) * sizeof(float));
    }
    batch.labels.push_back(examples[i].label);
    batch.epoch = std::max(batch.epoch, examples[i].epoch);
  }
  return batch;
}

void InputPipeline::DirectLoop(Work* work, bool idle) {
  if (idle) TakeIdlePriority();
  for (;;) {
    std::lock_guard<std::mutex> unit(work->mu);
    if (!TakesUp(*work, idle)) return;
    if (work->begin == work->order.size()) {  // the epoch is walked
      if (opts_.epochs != 0 && work->epoch + 1 >= opts_.epochs) {
        work->done = true;
        break;
      }
      ++work->epoch;
      work->order = EpochOrder(shard_, opts_.seed, opts_.shard.index, work->epoch);
      work->begin = 0;
    }
    const size_t end = std::min(work->order.size(), work->begin + opts_.batch_size);
    const int64_t n = static_cast<int64_t>(end - work->begin);
    Batch batch = NewBatch(n);
    batch.epoch = work->epoch;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t example = work->order[work->begin + i];
      if (opts_.preprocessing == proto::InputSpec::PIXEL_IDS) {
        AppendPixelIds(*ds_, example, &batch.sparse[kPixelIdsFeature]);
      } else {
        Preprocess(example, &work->rng, batch.images.data() + i * example_size_);
      }
      batch.labels.push_back(ds_->labels[example]);
    }
    work->begin = end;
    if (!Push(std::move(batch))) {  // stopping
      work->done = true;
      return;
    }
  }
  Finish();
}

Batch InputPipeline::NewBatch(int64_t n) const {
  Batch batch;
  if (opts_.preprocessing == proto::InputSpec::PIXEL_IDS) {
    batch.sparse[kPixelIdsFeature] = RaggedIds();
  } else {
    batch.images = Tensor({n, opts_.height, opts_.width, ds_->depth}, Tensor::kUninitialized);
  }
  batch.labels.reserve(static_cast<size_t>(n));
  return batch;
}

bool InputPipeline::Push(Batch batch) {
  std::unique_lock<std::mutex> lock(mu_);
  not_full_.wait(lock, [this] {
    return stopping_ || batches_.size() < static_cast<size_t>(opts_.batches_ahead);
  });
  if (stopping_) return false;
  batches_.push_back(std::move(batch));
  not_empty_.notify_one();
  return true;
}

void InputPipeline::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  done_ = true;
  not_empty_.notify_all();
}

Status PrepareEvalImages(const ImageDataset& ds, int64_t begin, int64_t count,
                         proto::InputSpec::Preprocessing preprocessing, int height, int width,
                         Tensor* out) {
  if (begin < 0 || count < 0 || begin > ds.count || count > ds.count - begin) {
    return InvalidArgument("images [" + std::to_string(begin) + ", " +
                           std::to_string(begin + count) + ") are not within the dataset's " +
                           std::to_string(ds.count));
  }
  Status shape = CheckOutputShape(ds, preprocessing, &height, &width);
  if (!shape.ok()) return shape;
  if (preprocessing == proto::InputSpec::PIXEL_IDS) {
    return InvalidArgument("PIXEL_IDS gives ids, not images (data/pixel_ids.h)");
  }
  if (preprocessing == proto::InputSpec::SCALE) {
    NormalizeImages(ds, begin, count, out);
    return OkStatus();
  }
  const Shape want = {count, height, width, ds.depth};
  if (out->size() == NumElements(want)) {
    out->Reshape(want);
  } else {
    *out = Tensor(want, Tensor::kUninitialized);
  }
  const int64_t size = int64_t{height} * width * ds.depth;
  for (int64_t i = 0; i < count; ++i) {
    const FloatImage img = PrepareForEvaluation(ToFloatImage(ds, begin + i), height, width);
    std::memcpy(out->data() + i * size, img.values.data(),
                static_cast<size_t>(size) * sizeof(float));
  }
  return OkStatus();
}

}  // namespace data
}  // namespace pstrain
