#include "bench/local_step.h"

#include <random>

#include "nn/elementwise.h"

namespace pstrain {
namespace bench {

constexpr int kBatches = 4;

RandomBatches::RandomBatches(const nn::Model& model, int batch) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> pixel(-0.5f, 0.5f);
  std::uniform_int_distribution<int32_t> label(0, model.num_classes() - 1);
  Shape shape = model.example_shape();
  shape.insert(shape.begin(), batch);
  for (int b = 0; b < kBatches; ++b) {
    data::Batch one;
    one.images = Tensor(shape);
    for (int64_t i = 0; i < one.images.size(); ++i) one.images[i] = pixel(rng);
    for (int i = 0; i < batch; ++i) one.labels.push_back(label(rng));
    batches_.push_back(std::move(one));
  }
}

bool RandomBatches::Next(data::Batch* out) {
  const data::Batch& b = batches_[next_++ % kBatches];
  out->images = b.images;
  out->labels = b.labels;
  return true;
}

int64_t RandomBatches::examples_per_epoch() const {
  return kBatches * static_cast<int64_t>(batches_[0].labels.size());
}

LocalStep::LocalStep(nn::Model* model) : model_(model) {
  for (const nn::VariableSpec& spec : model->variables()) {
    params_.push_back(nn::InitialValue(spec, /*seed=*/1));
    accums_.emplace_back(spec.shape);
  }
}

StatusOr<float> LocalStep::Run(const data::Batch& batch) {
  PS_ASSIGN_OR_RETURN(float loss,
                      model_->LossAndGradients(params_, batch.images, batch.labels, &grads_));
  for (size_t v = 0; v < params_.size(); ++v) {
    float* var = params_[v].data();
    float* accum = accums_[v].data();
    const float* g = grads_[v].data();
    const int64_t n = params_[v].size();
#pragma omp parallel for simd schedule(static)
    for (int64_t j = 0; j < n; ++j) {
      nn::NesterovMomentum(kLearningRate, kMomentum, g[j], &var[j], &accum[j]);
    }
  }
  return loss;
}

}  // namespace bench
}  // namespace pstrain
