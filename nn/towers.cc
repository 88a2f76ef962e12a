#include "nn/towers.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <thread>

#include "nn/gpus.h"
#include "nn/graph_model.h"

namespace pstrain {
namespace nn {
namespace {

// OpenMP threads for each of n towers sharing the caller's threads (the
// cores, or OMP_NUM_THREADS).
int ThreadsPerTower(int n) { return std::max(1, omp_get_max_threads() / n); }

}  // namespace

StatusOr<std::unique_ptr<Towers>> Towers::Create(const proto::ModelSpec& spec, int num_towers,
                                                 TowerDevices devices) {
  if (num_towers < 1) return InvalidArgument("num_towers must be >= 1");
  std::vector<std::unique_ptr<GraphModel>> towers;
  for (int t = 0; t < num_towers; ++t) {
    std::unique_ptr<Backend> backend;  // null: the CPU's
    if (devices == TowerDevices::kGpus) {
      PS_ASSIGN_OR_RETURN(backend, CreateGpuBackend(t));
    }
    // Each tower draws its own dropout masks.
    PS_ASSIGN_OR_RETURN(
        std::unique_ptr<GraphModel> tower,
        GraphModel::Create(spec, /*seed=*/static_cast<uint64_t>(t), std::move(backend)));
    // Several GPUs average on the devices: the gradients stay there.
    if (!tower->lookups().empty() && num_towers > 1) {
      return InvalidArgument("model " + tower->name() +
                             " looks up ids (embedding layers): it trains on one tower, not " +
                             std::to_string(num_towers));
    }
    if (devices == TowerDevices::kGpus && num_towers > 1) tower->KeepGradientsOnDevice();
    towers.push_back(std::move(tower));
  }
  std::unique_ptr<GpuAllReduce> all_reduce;
  if (devices == TowerDevices::kGpus && num_towers > 1) {
    PS_ASSIGN_OR_RETURN(all_reduce, CreateGpuAllReduce(num_towers));
  }
  return std::unique_ptr<Towers>(new Towers(std::move(towers), std::move(all_reduce)));
}

Towers::Towers(std::vector<std::unique_ptr<GraphModel>> towers,
               std::unique_ptr<GpuAllReduce> all_reduce)
    : towers_(std::move(towers)),
      all_reduce_(std::move(all_reduce)),
      tower_grads_(towers_.size()),
      slices_(towers_.size()) {}

std::string Towers::backend() const {
  if (num_towers() == 1) return towers_[0]->backend();
  // The backend as a tower thread sees it, with its share of the cores.
  std::string tower;
  const int threads = ThreadsPerTower(num_towers());
  std::thread([&] {
    omp_set_num_threads(threads);
    tower = towers_[0]->backend();
  }).join();
  return std::to_string(num_towers()) + " towers, each on " + tower;
}

StatusOr<float> Towers::LossAndGradients(const std::vector<Tensor>& params, const ModelInput& input,
                                         const std::vector<int32_t>& labels,
                                         std::vector<Tensor>* grads, std::vector<Tensor>* row_grads,
                                         StepHooks* hooks) {
  const int k = num_towers();
  if (k == 1) return towers_[0]->LossAndGradients(params, input, labels, grads, row_grads, hooks);
  // Several towers are of a model of images (Create refuses more than one
  // for ids).
  PS_RETURN_IF_ERROR(CheckInputKind(*this, "towers", input));
  const Tensor& images = *input.images;
  if (hooks != nullptr) {
    for (size_t v = 0; v < params.size(); ++v) PS_RETURN_IF_ERROR(hooks->ParamReady(v));
  }
  const int64_t n = images.rank() > 0 ? images.dim(0) : 0;
  if (n == 0 || n % k != 0 || static_cast<int64_t>(labels.size()) != n) {
    return InvalidArgument("towers: a batch of " + std::to_string(n) + " images and " +
                           std::to_string(labels.size()) + " labels does not split into " +
                           std::to_string(k) + " equal slices");
  }
  const int64_t per = n / k;
  Shape slice_shape = images.shape();
  slice_shape[0] = per;
  const int64_t slice_size = images.size() / k;

  // Tower t runs on its own thread with its share of the cores.
  const int threads = ThreadsPerTower(k);
  std::vector<std::future<StatusOr<float>>> runs;
  for (int t = 0; t < k; ++t) {
    runs.push_back(std::async(std::launch::async, [&, t]() -> StatusOr<float> {
      omp_set_num_threads(threads);
      if (slices_[t].shape() != slice_shape)
        slices_[t] = Tensor(slice_shape, Tensor::kUninitialized);
      std::memcpy(slices_[t].data(), images.data() + t * slice_size, slices_[t].bytes());
      const std::vector<int32_t> slice_labels(labels.begin() + t * per,
                                              labels.begin() + (t + 1) * per);
      auto loss = towers_[t]->LossAndGradients(params, slices_[t], slice_labels, &tower_grads_[t]);
      if (loss.ok()) PS_RETURN_IF_ERROR(towers_[t]->backend_ptr()->Finish());
      return loss;
    }));
  }
  float loss = 0;
  Status first = OkStatus();
  for (int t = 0; t < k; ++t) {
    StatusOr<float> r = runs[t].get();
    if (!r.ok()) {
      if (first.ok()) first = r.status().Annotate("tower " + std::to_string(t));
      continue;
    }
    loss += *r / k;
  }
  PS_RETURN_IF_ERROR(first);

  if (all_reduce_ != nullptr) {
    PS_RETURN_IF_ERROR(AverageOnDevices(grads));
  } else {
    AverageOnHost(grads);
  }
  if (hooks != nullptr) {
    for (size_t v = grads->size(); v-- > 0;) PS_RETURN_IF_ERROR(hooks->GradientReady(v));
  }
  return loss;
}

Status Towers::AverageOnDevices(std::vector<Tensor>* grads) {
  std::vector<std::vector<Tensor>*> per_device;
  for (auto& tower : towers_) per_device.push_back(tower->DeviceGradients());
  PS_RETURN_IF_ERROR(all_reduce_->Average(per_device).Annotate("towers"));
  std::vector<Tensor>& mean = *towers_[0]->DeviceGradients();
  grads->resize(mean.size());
  Backend* first = towers_[0]->backend_ptr();
  for (size_t v = 0; v < mean.size(); ++v) {
    PS_RETURN_IF_ERROR(first->Download(mean[v], &(*grads)[v]).Annotate("towers"));
  }
  return OkStatus();
}

// The mean over the towers' buffers, variable by variable.
void Towers::AverageOnHost(std::vector<Tensor>* grads) {
  grads->resize(tower_grads_[0].size());
  const int k = num_towers();
  const float scale = 1.0f / static_cast<float>(k);
  for (size_t v = 0; v < grads->size(); ++v) {
    Tensor& out = (*grads)[v];
    if (out.shape() != tower_grads_[0][v].shape()) {
      out = Tensor(tower_grads_[0][v].shape(), Tensor::kUninitialized);
    }
    float* o = out.data();
    const int64_t size = out.size();
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < size; ++i) {
      float sum = 0;
      for (int t = 0; t < k; ++t) sum += tower_grads_[t][v][i];
      o[i] = sum * scale;
    }
  }
}

}  // namespace nn
}  // namespace pstrain
