// Towers: K copies of one network that share its variables, each running on
// its own slice of the batch at the same time, as the seeds'
// cifar10_multi_gpu_train builds one tower per GPU. LossAndGradients cuts a
// batch of K * B examples into K slices of B, runs every tower on its slice
// in a thread of its own (each with 1/K of the caller's OpenMP threads),
// and averages the towers' losses and gradients: with equal slices that is
// the loss and gradient of the whole batch, as one tower would compute them.
// A batch norm's moving-average deltas are averaged likewise. Towers on
// GPUs average on the devices (NCCL's all-reduce) and download the mean
// once; towers on the CPU average the towers' buffers.
//
// Thread-compatible, as a Model is: one caller at a time.
#ifndef PSTRAIN_NN_TOWERS_H_
#define PSTRAIN_NN_TOWERS_H_

#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "nn/gpus.h"
#include "nn/graph_model.h"
#include "nn/model.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// Where the towers run: on the CPU backend, each with its share of the
// cores, or one on each GPU from cuda:0 (nn/gpus.h).
enum class TowerDevices { kCpu, kGpus };

class Towers : public Model {
 public:
  // InvalidArgument for num_towers < 1, or above 1 for a model of ids; the
  // spec's errors (GraphModel); a GPU's that cannot be opened.
  static StatusOr<std::unique_ptr<Towers>> Create(const proto::ModelSpec& spec, int num_towers,
                                                  TowerDevices devices = TowerDevices::kCpu);

  int num_towers() const { return static_cast<int>(towers_.size()); }

  const std::vector<VariableSpec>& variables() const override { return towers_[0]->variables(); }
  Shape example_shape() const override { return towers_[0]->example_shape(); }
  int num_classes() const override { return towers_[0]->num_classes(); }
  // "2 towers, each on cpu (oneDNN 2.6.3, 1 thread)"; one tower's own.
  std::string backend() const override;
  // InvalidArgument unless the batch splits into num_towers() equal slices.
  // With several towers, hooks see every variable waited for before any
  // tower starts and every gradient handed on once the towers' mean is
  // taken; one tower meets them layer by layer.
  // A model of ids trains on one tower (Create refuses more).
  const std::vector<EmbeddingLookup>& lookups() const override { return towers_[0]->lookups(); }
  const std::vector<std::string>& dense_columns() const override {
    return towers_[0]->dense_columns();
  }
  using Model::Logits;
  using Model::LossAndGradients;
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const ModelInput& input,
                                   const std::vector<int32_t>& labels, std::vector<Tensor>* grads,
                                   std::vector<Tensor>* row_grads, StepHooks* hooks) override;
  // On the first tower, the whole batch.
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const ModelInput& input) override {
    return towers_[0]->Logits(params, input);
  }

 private:
  Towers(std::vector<std::unique_ptr<GraphModel>> towers, std::unique_ptr<GpuAllReduce> all_reduce);
  // The towers' mean gradient into *grads: on the devices, or on the host.
  Status AverageOnDevices(std::vector<Tensor>* grads);
  void AverageOnHost(std::vector<Tensor>* grads);

  std::vector<std::unique_ptr<GraphModel>> towers_;
  std::unique_ptr<GpuAllReduce> all_reduce_;      // set for towers on GPUs
  std::vector<std::vector<Tensor>> tower_grads_;  // per tower, reused across steps
  std::vector<Tensor> slices_;                    // per tower, reused across steps
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_TOWERS_H_
