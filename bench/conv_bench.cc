// conv_bench: one 5x5 stride-1 SAME convolution layer, forward and forward +
// backward, through oneDNN's direct kernel and through the Winograd kernel
// (nn/cpu/winograd_conv.h) with each GEMM kernel this CPU runs, on the second layers of cifar10 and
// mnist at batch 128. Prints one line of JSON per layer and kernel: median ms and the direct
// method's GFLOP/s equivalent (2 * N * H * W * 25 * cin * cout per pass, padding included).
#include <gflags/gflags.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "bench/median_ms.h"
#include "nn/cpu/conv2d.h"
#include "nn/cpu/dnnl_context.h"
#include "nn/cpu/small_gemm.h"
#include "nn/cpu/winograd_conv.h"

DEFINE_int32(batch, 128, "images per pass");
DEFINE_int32(reps, 20, "timed repetitions (after 3 untimed)");

namespace pstrain {
namespace {

struct Layer {
  const char* name;
  int64_t size, cin, cout;
};

Tensor Random(const Shape& shape, std::mt19937* rng) {
  std::uniform_real_distribution<float> u(-1, 1);
  Tensor t(shape);
  for (int64_t i = 0; i < t.size(); ++i) t[i] = u(*rng);
  return t;
}

void Run(const Layer& layer, const char* kernel_name, nn::AffineKernel* kernel) {
  std::mt19937 rng(1);
  const int64_t n = FLAGS_batch, s = layer.size;
  Tensor x = Random({n, s, s, layer.cin}, &rng), w = Random({5, 5, layer.cin, layer.cout}, &rng);
  Tensor b = Random({layer.cout}, &rng), dy = Random({n, s, s, layer.cout}, &rng);
  Tensor y, dx, dw, db;
  bool ok = true;
  const double forward =
      bench::MedianMs([&] { ok &= kernel->Forward(x, w, b, &y).ok(); }, FLAGS_reps);
  const double both = bench::MedianMs(
      [&] {
        ok &= kernel->Forward(x, w, b, &y).ok();
        ok &= kernel->Backward(x, w, dy, &dx, &dw, &db).ok();
      },
      FLAGS_reps);
  if (!ok) {
    std::fprintf(stderr, "%s on %s failed\n", kernel_name, layer.name);
    std::exit(1);
  }
  const double gflop = 2.0 * n * s * s * 25 * layer.cin * layer.cout / 1e9;
  std::printf(
      "{\"bench\":\"conv\",\"layer\":\"%s\",\"kernel\":\"%s\",\"batch\":%d,"
      "\"forward_ms\":%.2f,\"forward_backward_ms\":%.2f,\"forward_gflops\":%.1f,"
      "\"forward_backward_gflops\":%.1f}\n",
      layer.name, kernel_name, FLAGS_batch, forward, both, gflop / forward * 1e3,
      3 * gflop / both * 1e3);
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  gflags::SetUsageMessage(
      "times the 5x5 layers of cifar10 and mnist through oneDNN and Winograd\n"
      "usage: conv_bench [--batch=128] [--reps=20]");
  gflags::ParseCommandLineFlags(&argc, &argv, true);
  if (FLAGS_batch < 1 || FLAGS_reps < 1) {
    std::fprintf(stderr, "--batch and --reps must be positive\n");
    return 1;
  }
  using namespace pstrain;
  const Layer layers[] = {{"cifar10_conv2", 12, 64, 64}, {"mnist_conv2", 14, 32, 64}};
  nn::cpu::DnnlContext dnnl;
  for (const auto& layer : layers) {
    const nn::Conv2DConfig config{5, 5, layer.cin, layer.cout, 1, nn::Padding::kSame};
    nn::cpu::Conv2D direct(&dnnl, config);
    Run(layer, "onednn_direct", &direct);
    for (auto path : {nn::cpu::GemmPath::kAvx512, nn::cpu::GemmPath::kAvx2}) {
      if (!nn::cpu::SmallGemmSupports(path)) continue;
      nn::cpu::WinogradConv2D winograd(config, path);
      Run(layer, (std::string("winograd_f4x5_") + nn::cpu::GemmPathName(path)).c_str(), &winograd);
    }
  }
  return 0;
}
