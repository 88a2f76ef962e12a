#include "chief/training_summaries.h"

#include <algorithm>

#include "data/input_pipeline.h"

namespace pstrain {
namespace {

constexpr int kHistogramBatch = 64;
constexpr int kImages = 3;

}  // namespace

StatusOr<std::unique_ptr<TrainingSummaries>> TrainingSummaries::Create(
    const std::string& train_dir, nn::Model* model, const data::ImageDataset* train_set,
    const ImageInput& input) {
  PS_ASSIGN_OR_RETURN(auto writer, EventWriter::Create(train_dir));
  return std::unique_ptr<TrainingSummaries>(
      new TrainingSummaries(std::move(writer), model, train_set, input));
}

TrainingSummaries::TrainingSummaries(std::unique_ptr<EventWriter> writer, nn::Model* model,
                                     const data::ImageDataset* train_set, const ImageInput& input)
    : writer_(std::move(writer)), model_(model), train_set_(train_set), input_(input) {}

Status TrainingSummaries::Scalars(int64_t step, double loss, double learning_rate,
                                  double steps_per_sec, double examples_per_sec) {
  // No worker has reported a loss yet: a 0 would read as a perfect model.
  if (loss > 0) PS_RETURN_IF_ERROR(writer_->AddScalar("loss", step, static_cast<float>(loss)));
  PS_RETURN_IF_ERROR(writer_->AddScalar("learning_rate", step, static_cast<float>(learning_rate)));
  PS_RETURN_IF_ERROR(
      writer_->AddScalar("global_step/sec", step, static_cast<float>(steps_per_sec)));
  return writer_->AddScalar("examples/sec", step, static_cast<float>(examples_per_sec));
}

Status TrainingSummaries::TableShard(int64_t step, const std::string& table, int ps, int64_t rows,
                                     int64_t bytes, int64_t admitted, int64_t expired) {
  const std::string tag = table + "/ps_" + std::to_string(ps) + "/";
  PS_RETURN_IF_ERROR(writer_->AddScalar(tag + "rows", step, static_cast<float>(rows)));
  PS_RETURN_IF_ERROR(writer_->AddScalar(tag + "bytes", step, static_cast<float>(bytes)));
  PS_RETURN_IF_ERROR(writer_->AddScalar(tag + "admitted", step, static_cast<float>(admitted)));
  return writer_->AddScalar(tag + "expired", step, static_cast<float>(expired));
}

Status TrainingSummaries::Histograms(int64_t step, const std::vector<Tensor>& params) {
  const auto& vars = model_->variables();
  // Gradients come from a batch of training images: a model of ids or
  // columns gets its variables' histograms alone.
  std::vector<Tensor> grads;
  if (train_set_ != nullptr && model_->lookups().empty()) {
    const int64_t n = std::min<int64_t>(kHistogramBatch, train_set_->count);
    if (next_batch_ + n > train_set_->count) next_batch_ = 0;
    Tensor images;
    // The evaluation path (no random distortions): a fixed view of the data.
    PS_RETURN_IF_ERROR(data::PrepareEvalImages(*train_set_, next_batch_, n, input_.preprocessing,
                                               input_.height, input_.width, &images));
    std::vector<int32_t> labels(train_set_->labels.begin() + next_batch_,
                                train_set_->labels.begin() + next_batch_ + n);
    next_batch_ += n;
    PS_RETURN_IF_ERROR(model_->LossAndGradients(params, images, labels, &grads).status());
  }
  for (size_t i = 0; i < vars.size(); ++i) {
    PS_RETURN_IF_ERROR(writer_->AddHistogram(vars[i].name, step, params[i].data(),
                                             static_cast<size_t>(params[i].size())));
    if (grads.empty()) continue;
    PS_RETURN_IF_ERROR(writer_->AddHistogram(vars[i].name + "/gradient", step, grads[i].data(),
                                             static_cast<size_t>(grads[i].size())));
  }
  return OkStatus();
}

Status TrainingSummaries::InputImages(int64_t step) {
  const size_t pixels = static_cast<size_t>(train_set_->image_size());
  for (int i = 0; i < kImages && i < train_set_->count; ++i) {
    PS_RETURN_IF_ERROR(writer_->AddImage("input/image/" + std::to_string(i), step, train_set_->rows,
                                         train_set_->cols, train_set_->depth,
                                         train_set_->pixels.data() + i * pixels));
  }
  return OkStatus();
}

Status TrainingSummaries::Accuracy(int64_t step, const std::string& tag, double accuracy) {
  return writer_->AddScalar(tag, step, static_cast<float>(accuracy));
}

}  // namespace pstrain
