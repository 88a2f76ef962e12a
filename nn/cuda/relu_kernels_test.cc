// The CUDA ReLU kernels against the CPU backend's on the same inputs. Needs
// a CUDA device: without one it prints why and exits 77, which ctest reports
// as skipped (SKIP_RETURN_CODE), never as passed.
#include "nn/cuda/relu_kernels.h"

#include <cstdio>
#include <random>
#include <vector>

#include "core/tensor.h"
#include "nn/cpu/relu.h"
#include "nn/cuda/cuda_status.h"
#include "nn/gpus.h"

namespace pstrain {
namespace {

constexpr int kSkip = 77;

// Prints the error of a failed step.
Status Check(const char* what, Status s) {
  if (!s.ok()) std::fprintf(stderr, "FAIL %s: %s\n", what, s.ToString().c_str());
  return s;
}

int Run() {
  const nn::GpuProbe probe = nn::ProbeGpus();
  if (probe.devices.empty()) {
    std::printf("SKIP: no CUDA device: %s\n", probe.why_none.c_str());
    return kSkip;
  }
  constexpr int64_t n = 100003;  // not a multiple of the block size
  std::mt19937 rng(1);
  std::normal_distribution<float> value;
  Tensor x({n}), dy({n});
  for (int64_t i = 0; i < n; ++i) x[i] = value(rng), dy[i] = value(rng);
  x[0] = 0.0f;  // the gradient at 0 is 0, as in TensorFlow

  Tensor want_y, want_dx;
  nn::cpu::ReluForward(x, &want_y);
  nn::cpu::ReluBackward(want_y, dy, &want_dx);

  float *dx_dev = nullptr, *dy_dev = nullptr, *x_dev = nullptr, *y_dev = nullptr;
  const size_t bytes = n * sizeof(float);
  for (float** p : {&x_dev, &y_dev, &dy_dev, &dx_dev}) {
    if (!Check("cudaMalloc", nn::cuda::CudaStatus(cudaMalloc(reinterpret_cast<void**>(p), bytes), "cudaMalloc")).ok()) return 1;
  }
  Tensor y({n}), dx({n});
  bool ok =
      Check("copy in", nn::cuda::CudaStatus(cudaMemcpy(x_dev, x.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy")).ok() &&
      Check("copy in", nn::cuda::CudaStatus(cudaMemcpy(dy_dev, dy.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy")).ok() &&
      Check("forward", nn::cuda::ReluForward(x_dev, y_dev, n, nullptr)).ok() &&
      Check("backward", nn::cuda::ReluBackward(y_dev, dy_dev, dx_dev, n, nullptr)).ok() &&
      Check("copy out", nn::cuda::CudaStatus(cudaMemcpy(y.data(), y_dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy")).ok() &&
      Check("copy out", nn::cuda::CudaStatus(cudaMemcpy(dx.data(), dx_dev, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy")).ok();
  for (float* p : {x_dev, y_dev, dy_dev, dx_dev}) cudaFree(p);
  if (!ok) return 1;
  for (int64_t i = 0; i < n; ++i) {
    if (y[i] != want_y[i] || dx[i] != want_dx[i]) {
      std::fprintf(stderr, "FAIL element %lld: y %g (CPU %g), dx %g (CPU %g)\n",
                   static_cast<long long>(i), y[i], want_y[i], dx[i], want_dx[i]);
      return 1;
    }
  }
  std::printf("PASS: %lld elements equal to the CPU backend's on %s\n", static_cast<long long>(n),
              probe.devices[0].c_str());
  return 0;
}

}  // namespace
}  // namespace pstrain

int main() { return pstrain::Run(); }
