// mnist_step_bench: the time of one training step in one process (mnist by
// default, --model=cifar10 or any model), the figure to set beside
// PyTorch's (bench/peers/pytorch/bench_train.py).
//
// One step = LossAndGradients at batch 128 on random data plus a Nesterov
// momentum update (lr 0.01, momentum 0.9) of every variable. Prints one line
// of JSON with min / median / mean / max seconds per step and images per
// second.
#include <gflags/gflags.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "bench/local_step.h"
#include "nn/model.h"

DEFINE_string(model, "mnist", "a built-in network, a ModelSpec file or keras:FILE.json");
DEFINE_int32(batch, 128, "images per step");
DEFINE_int32(warmup, 10, "untimed steps first");
DEFINE_int32(steps, 100, "timed steps");

namespace pstrain {
namespace {

int Run() {
  auto created = nn::CreateModel(FLAGS_model);
  if (!created.ok()) {
    std::fprintf(stderr, "%s\n", created.status().ToString().c_str());
    return 1;
  }
  bench::RandomBatches input(**created, FLAGS_batch);
  bench::LocalStep local(created->get());
  data::Batch batch;
  float loss = 0;
  auto step = [&](int) -> bool {
    input.Next(&batch);
    auto result = local.Run(batch);
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
      return false;
    }
    loss = *result;
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
  const double mean = std::accumulate(times.begin(), times.end(), 0.0) / n;
  std::printf(
      "{\"bench\":\"step\",\"model\":\"%s\",\"batch\":%d,\"warmup\":%d,\"steps\":%d,"
      "\"step_s\":{\"min\":%.5f,\"median\":%.5f,\"mean\":%.5f,\"max\":%.5f},"
      "\"imgs_per_s_median\":%.1f,\"final_loss\":%.4f}\n",
      FLAGS_model.c_str(), FLAGS_batch, FLAGS_warmup, FLAGS_steps, times.front(), median, mean,
      times.back(), FLAGS_batch / median, loss);
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
