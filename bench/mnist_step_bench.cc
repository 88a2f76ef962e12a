// mnist_step_bench: the time of one training step in one process (mnist by
// default, --model=cifar10 or any model), the figure to set beside
// PyTorch's (shared/peers/pytorch/bench_train.py).
//
// One step = LossAndGradients at batch 128 on random data plus a Nesterov
// momentum update (lr 0.01, momentum 0.9) of every variable. Prints one line
// of JSON with min / median / max seconds per step and images per second.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "nn/elementwise.h"
#include "nn/model.h"

DEFINE_string(model, "mnist", "a built-in network or a ModelSpec file");
DEFINE_int32(batch, 128, "images per step");
DEFINE_int32(warmup, 10, "untimed steps first");
DEFINE_int32(steps, 100, "timed steps");

namespace pstrain {
namespace {

constexpr float kLearningRate = 0.01f;
constexpr float kMomentum = 0.9f;
constexpr int kBatches = 4;  // distinct random batches, cycled, as the PyTorch peer does

int Run() {
  auto created = nn::CreateModel(FLAGS_model);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  nn::Model& model = **created;

  std::vector<Tensor> params, accums, grads;
  for (const nn::VariableSpec& spec : model.variables()) {
    params.push_back(nn::InitialValue(spec, /*seed=*/1));
    accums.emplace_back(spec.shape);
  }
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> pixel(-0.5f, 0.5f);
  std::uniform_int_distribution<int32_t> label(0, model.num_classes() - 1);
  Shape shape = model.example_shape();
  shape.insert(shape.begin(), FLAGS_batch);
  std::vector<Tensor> images;
  std::vector<std::vector<int32_t>> labels(kBatches);
  for (int b = 0; b < kBatches; ++b) {
    images.emplace_back(shape);
    for (int64_t i = 0; i < images[b].size(); ++i) images[b][i] = pixel(rng);
    for (int i = 0; i < FLAGS_batch; ++i) labels[b].push_back(label(rng));
  }

  float loss = 0;
  auto step = [&](int i) -> bool {
    auto result =
        model.LossAndGradients(params, images[i % kBatches], labels[i % kBatches], &grads);
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
      return false;
    }
    loss = *result;
    for (size_t v = 0; v < params.size(); ++v) {
      float* var = params[v].data();
      float* accum = accums[v].data();
      const float* g = grads[v].data();
      const int64_t n = params[v].size();
#pragma omp parallel for simd schedule(static)
      for (int64_t j = 0; j < n; ++j) {
        nn::NesterovMomentum(kLearningRate, kMomentum, g[j], &var[j], &accum[j]);
      }
    }
    return true;
  };

  for (int i = 0; i < FLAGS_warmup; ++i) {
    if (!step(i)) return 1;
  }
  std::vector<double> times;
  for (int i = 0; i < FLAGS_steps; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!step(i)) return 1;
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  const double median = n % 2 == 1 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
  std::printf(
      "{\"bench\":\"step\",\"model\":\"%s\",\"batch\":%d,\"warmup\":%d,\"steps\":%d,"
      "\"step_s\":{\"min\":%.5f,\"median\":%.5f,\"max\":%.5f},"
      "\"imgs_per_s_median\":%.1f,\"final_loss\":%.4f}\n",
      FLAGS_model.c_str(), FLAGS_batch, FLAGS_warmup, FLAGS_steps, times.front(), median, times.back(),
      FLAGS_batch / median, loss);
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_steps < 1 || FLAGS_batch < 1 || FLAGS_warmup < 0) {
    std::fprintf(stderr, "--steps and --batch must be positive\n");
    return 1;
  }
  return pstrain::Run();
}
