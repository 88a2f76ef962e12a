// Backend: where a model's arithmetic runs. It makes the kernels of
// nn/kernels.h for the layers and runs the element-wise operations and the
// loss that need no state. One backend serves one model on one thread.
//
// The CPU backend (nn/cpu/) runs on oneDNN and hand-written loops; the CUDA
// backend (nn/cuda/) on cuDNN, cuBLAS and kernels of its own. A third is a
// folder beside them that implements this interface; no layer changes.
//
// Memory: a device backend's kernels take and give tensors in its device
// memory (memory() is set). The model (nn/graph_model.h) uploads the
// variables and images once per step and downloads the gradients and logits;
// between the layers everything stays on the device.
#ifndef PSTRAIN_NN_BACKEND_H_
#define PSTRAIN_NN_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device_memory.h"
#include "core/status.h"
#include "core/tensor.h"
#include "nn/kernels.h"

namespace pstrain {
namespace nn {

class Backend {
 public:
  virtual ~Backend() = default;

  // "cpu (oneDNN 2.6.3, 2 threads)": for logs.
  virtual std::string Describe() const = 0;

  // Where the kernels want their operands: nullptr for host memory (the
  // defaults below), else the device memory every operand must be in.
  virtual DeviceMemory* memory() { return nullptr; }
  // *device = host's contents in memory() (resized); *host = device's.
  virtual Status Upload(const Tensor& host, Tensor* device);
  virtual Status Download(const Tensor& device, Tensor* host);
  // *y = x's elements in `shape` (as many), in x's memory: flatten, and
  // dropout at inference.
  virtual Status CopyAs(const Tensor& x, const Shape& shape, Tensor* y);
  // Zeros in memory(): a convolution's bias where the layer has none.
  virtual StatusOr<Tensor> Zeros(const Shape& shape);
  // Returns once the work queued on the device is done (at once on the
  // host), so that another party (NCCL) may read what it wrote.
  virtual Status Finish() { return OkStatus(); }

  // Kernels. A config out of range (an LRN bias of 0, a keep_prob of 2) is
  // InvalidArgument.
  virtual StatusOr<std::unique_ptr<AffineKernel>> Conv2D(const Conv2DConfig& config) = 0;
  virtual StatusOr<std::unique_ptr<AffineKernel>> Dense(int64_t in, int64_t out) = 0;
  virtual StatusOr<std::unique_ptr<PoolKernel>> MaxPool(const PoolConfig& config) = 0;
  virtual StatusOr<std::unique_ptr<PoolKernel>> AvgPool(const PoolConfig& config) = 0;
  virtual StatusOr<std::unique_ptr<LrnKernel>> Lrn(const LrnConfig& config) = 0;
  // Masks drawn from `seed`: a run with the same seed repeats.
  virtual StatusOr<std::unique_ptr<DropoutKernel>> Dropout(float keep_prob, uint64_t seed) = 0;
  virtual StatusOr<std::unique_ptr<BatchNormKernel>> BatchNorm(const BatchNormConfig& config) = 0;

  // y = max(x, 0); y may be x.
  virtual Status Relu(const Tensor& x, Tensor* y) = 0;
  // dx = dy where y > 0, else 0, from the ReLU's output y; dx may be dy.
  virtual Status ReluGrad(const Tensor& y, const Tensor& dy, Tensor* dx) = 0;
  // The mean softmax cross-entropy of logits [N, classes] against labels,
  // and its gradient in *dlogits. InvalidArgument for a label out of range.
  virtual StatusOr<float> SoftmaxCrossEntropy(const Tensor& logits,
                                              const std::vector<int32_t>& labels,
                                              Tensor* dlogits) = 0;
  // Weight decay of w: adds wd * w to dw and returns wd * sum(w^2) / 2, the
  // loss term.
  virtual StatusOr<double> AddWeightDecay(const Tensor& w, float wd, Tensor* dw) = 0;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_BACKEND_H_
