// The training step of one process, as the benchmarks time it beside
// PyTorch's (mnist_step_bench) and beside the distributed step
// (overlap_bench): LossAndGradients on a batch of random data, then a
// Nesterov momentum update (lr 0.01, momentum 0.9) of every variable, as
// the main job's ps applies it.
#ifndef PSTRAIN_BENCH_LOCAL_STEP_H_
#define PSTRAIN_BENCH_LOCAL_STEP_H_

#include <cstdint>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "data/batch_source.h"
#include "nn/model.h"

namespace pstrain {
namespace bench {

constexpr float kLearningRate = 0.01f;
constexpr float kMomentum = 0.9f;

// Four distinct batches of random images and labels, cycled for ever, as
// the PyTorch peer does.
class RandomBatches : public data::BatchSource {
 public:
  RandomBatches(const nn::Model& model, int batch);
  bool Next(data::Batch* out) override;
  int64_t examples_per_epoch() const override;

 private:
  std::vector<data::Batch> batches_;
  int64_t next_ = 0;
};

class LocalStep {
 public:
  // Borrows model; the variables start from their initializers (seed 1).
  explicit LocalStep(nn::Model* model);
  // One step on `batch`; its loss.
  StatusOr<float> Run(const data::Batch& batch);
  const std::vector<Tensor>& params() const { return params_; }

 private:
  nn::Model* const model_;
  std::vector<Tensor> params_, accums_, grads_;
};

}  // namespace bench
}  // namespace pstrain

#endif  // PSTRAIN_BENCH_LOCAL_STEP_H_
