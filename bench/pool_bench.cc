// pool_bench: mnist's two 2x2 stride-2 SAME max pools (after conv1 and
// conv2) at the training batch (128), the chief's evaluation batch (200)
// and 1000: forward (keeping the winners for backward), inference (none
// kept) and backward. Prints one line of JSON per pool and batch: median ms
// of each pass and the GB/s its tensors' bytes make (forward: x read, y and
// the winners written; inference: x read, y written; backward: dy and the
// winners read, dx written).
#include <gflags/gflags.h>

#include <cstdio>
#include <random>
#include <utility>

#include "bench/median_ms.h"
#include "nn/cpu/max_pool.h"

DEFINE_int32(reps, 20, "timed repetitions (after 3 untimed)");

namespace pstrain {
namespace {

struct Pool {
  const char* name;
  int64_t size, channels;
};

int Run(const Pool& pool, int64_t batch) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor x({batch, pool.size, pool.size, pool.channels});
  for (int64_t i = 0; i < x.size(); ++i) x[i] = u(rng);
  nn::cpu::MaxPool kernel({/*window=*/2, /*stride=*/2, nn::Padding::kSame});
  Tensor y, dx;
  Status status;
  auto keep_first = [&status](Status s) {
    if (status.ok()) status = std::move(s);
  };
  const double inference = bench::MedianMs([&] { keep_first(kernel.Infer(x, &y)); }, FLAGS_reps);
  const double forward = bench::MedianMs([&] { keep_first(kernel.Forward(x, &y)); }, FLAGS_reps);
  Tensor dy(y.shape());
  for (int64_t i = 0; i < dy.size(); ++i) dy[i] = u(rng);
  const double backward =
      bench::MedianMs([&] { keep_first(kernel.Backward(x.shape(), dy, &dx)); }, FLAGS_reps);
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", pool.name, status.ToString().c_str());
    return 1;
  }
  // Bytes: x (4 per cell), y and the winners (4 and 4 per output).
  const double x_bytes = 4.0 * x.size(), y_bytes = 4.0 * y.size();
  const double forward_gb = (x_bytes + 2 * y_bytes) / 1e9, backward_gb = forward_gb;
  const double inference_gb = (x_bytes + y_bytes) / 1e9;
  std::printf(
      "{\"pool\": \"%s\", \"batch\": %lld, \"forward_ms\": %.3f, \"forward_gb_per_s\": %.1f, "
      "\"inference_ms\": %.3f, \"inference_gb_per_s\": %.1f, \"backward_ms\": %.3f, "
      "\"backward_gb_per_s\": %.1f}\n",
      pool.name, static_cast<long long>(batch), forward, forward_gb / (forward / 1e3), inference,
      inference_gb / (inference / 1e3), backward, backward_gb / (backward / 1e3));
  return 0;
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  const pstrain::Pool pools[] = {{"mnist pool1", 28, 32}, {"mnist pool2", 14, 64}};
  int failed = 0;
  for (int64_t batch : {128, 200, 1000}) {
    for (const pstrain::Pool& pool : pools) failed |= pstrain::Run(pool, batch);
  }
  return failed;
}
