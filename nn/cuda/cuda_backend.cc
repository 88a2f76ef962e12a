// The CUDA backend: one device, its kernels (nn/cuda/cuda_kernels.h), and
// the operations without state: ReLU, the loss and weight decay on kernels
// of its own, tensors moved through the device's pinned buffers.
#include <string>
#include <vector>

#include "nn/backend.h"
#include "nn/cuda/cuda_device.h"
#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/cuda_status.h"
#include "nn/cuda/elementwise_kernels.h"
#include "nn/gpus.h"

namespace pstrain {
namespace nn {
namespace cuda {

Status CheckOnDevice(CudaDevice* device, const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t->size() > 0 && t->device() != device->memory()) {
      return FailedPrecondition(std::string(op) + ": an operand of " + ShapeString(t->shape()) +
                                " is not in " + device->name() + "'s memory");
    }
  }
  return OkStatus();
}

namespace {

class CudaBackend : public Backend {
 public:
  explicit CudaBackend(std::unique_ptr<CudaDevice> device) : d_(std::move(device)) {}

  std::string Describe() const override {
    int runtime = 0;
    cudaRuntimeGetVersion(&runtime);
    return "cuda:" + std::to_string(d_->ordinal()) + " " + d_->name() + " (CUDA " +
           std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + ", cuDNN " +
           std::to_string(cudnnGetVersion()) + ")";
  }

  DeviceMemory* memory() override { return d_->memory(); }
  Status Upload(const Tensor& host, Tensor* device) override {
    PS_RETURN_IF_ERROR(d_->MakeCurrent());
    return d_->Upload(host, device);
  }
  Status Download(const Tensor& device, Tensor* host) override {
    return d_->Download(device, host);
  }
  Status CopyAs(const Tensor& x, const Shape& shape, Tensor* y) override {
    PS_RETURN_IF_ERROR(CheckOnDevice(d_.get(), "copy", {&x}));
    if (NumElements(shape) != x.size()) {
      return InvalidArgument("copy of " + ShapeString(x.shape()) + " as " + ShapeString(shape));
    }
    PS_RETURN_IF_ERROR(d_->Ensure(y, shape));
    if (x.size() == 0 || y->data() == x.data()) return OkStatus();
    PS_CUDA(
        cudaMemcpyAsync(y->data(), x.data(), x.bytes(), cudaMemcpyDeviceToDevice, d_->stream()));
    return OkStatus();
  }
  Status Finish() override { return d_->Synchronize(); }
  StatusOr<Tensor> Zeros(const Shape& shape) override {
    PS_RETURN_IF_ERROR(d_->MakeCurrent());
    Tensor t;
    PS_RETURN_IF_ERROR(d_->Ensure(&t, shape));
    PS_RETURN_IF_ERROR(FillKernel(t.data(), 0.0f, t.size(), d_->stream()));
    return t;
  }

  StatusOr<std::unique_ptr<AffineKernel>> Conv2D(const Conv2DConfig& config) override {
    return MakeConv2D(d_.get(), config);
  }
  StatusOr<std::unique_ptr<AffineKernel>> Dense(int64_t in, int64_t out) override {
    return MakeDense(d_.get(), in, out);
  }
  StatusOr<std::unique_ptr<PoolKernel>> MaxPool(const PoolConfig& config) override {
    return MakePool(d_.get(), config, /*max=*/true);
  }
  StatusOr<std::unique_ptr<PoolKernel>> AvgPool(const PoolConfig& config) override {
    return MakePool(d_.get(), config, /*max=*/false);
  }
  StatusOr<std::unique_ptr<LrnKernel>> Lrn(const LrnConfig& config) override {
    return MakeLrn(d_.get(), config);
  }
  StatusOr<std::unique_ptr<DropoutKernel>> Dropout(float keep_prob, uint64_t seed) override {
    return MakeDropout(d_.get(), keep_prob, seed);
  }
  StatusOr<std::unique_ptr<BatchNormKernel>> BatchNorm(const BatchNormConfig& config) override {
    return MakeBatchNorm(d_.get(), config);
  }

  Status Relu(const Tensor& x, Tensor* y) override {
    PS_RETURN_IF_ERROR(CheckOnDevice(d_.get(), "relu", {&x}));
    if (y != &x) PS_RETURN_IF_ERROR(d_->Ensure(y, x.shape()));
    return ReluForward(x.data(), y->data(), x.size(), d_->stream());
  }
  Status ReluGrad(const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (y.shape() != dy.shape()) {
      return InvalidArgument("relu: output " + ShapeString(y.shape()) + " but gradient " +
                             ShapeString(dy.shape()));
    }
    PS_RETURN_IF_ERROR(CheckOnDevice(d_.get(), "relu grad", {&y, &dy}));
    if (dx != &dy) PS_RETURN_IF_ERROR(d_->Ensure(dx, dy.shape()));
    return ReluBackward(y.data(), dy.data(), dx->data(), dy.size(), d_->stream());
  }

  StatusOr<float> SoftmaxCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels,
                                      Tensor* dlogits) override {
    if (logits.rank() != 2 || logits.dim(0) != static_cast<int64_t>(labels.size()) ||
        logits.dim(0) == 0) {
      return InvalidArgument("softmax_xent: logits " + ShapeString(logits.shape()) + " for " +
                             std::to_string(labels.size()) + " labels");
    }
    const int64_t n = logits.dim(0), c = logits.dim(1);
    for (int64_t i = 0; i < n; ++i) {
      if (labels[i] < 0 || labels[i] >= c) {
        return InvalidArgument("softmax_xent: label " + std::to_string(labels[i]) + " at " +
                               std::to_string(i) + " not in [0," + std::to_string(c) + ")");
      }
    }
    PS_RETURN_IF_ERROR(CheckOnDevice(d_.get(), "softmax cross-entropy", {&logits}));
    PS_ASSIGN_OR_RETURN(const int32_t* device_labels, d_->UploadInts(labels.data(), n));
    if (dlogits != nullptr) PS_RETURN_IF_ERROR(d_->Ensure(dlogits, logits.shape()));
    PS_RETURN_IF_ERROR(d_->Ensure(&losses_, {2 * n}));  // n doubles
    auto* losses = reinterpret_cast<double*>(losses_.data());
    PS_RETURN_IF_ERROR(SoftmaxCrossEntropyRows(
        logits.data(), device_labels, n, c, 1.0 / static_cast<double>(n),
        dlogits != nullptr ? dlogits->data() : nullptr, losses, d_->stream()));
    std::vector<double> host(n);
    PS_CUDA(cudaMemcpyAsync(host.data(), losses, n * sizeof(double), cudaMemcpyDeviceToHost,
                            d_->stream()));
    PS_RETURN_IF_ERROR(d_->Synchronize());
    double total = 0;  // in row order, as the CPU backend adds them
    for (double l : host) total += l;
    return static_cast<float>(total / n);
  }

  StatusOr<double> AddWeightDecay(const Tensor& w, float wd, Tensor* dw) override {
    if (w.shape() != dw->shape()) {
      return InvalidArgument("weight decay: variable " + ShapeString(w.shape()) + " but gradient " +
                             ShapeString(dw->shape()));
    }
    PS_RETURN_IF_ERROR(CheckOnDevice(d_.get(), "weight decay", {&w, dw}));
    PS_RETURN_IF_ERROR(d_->Ensure(&sum_, {2}));  // one double
    auto* sum = reinterpret_cast<double*>(sum_.data());
    PS_RETURN_IF_ERROR(WeightDecay(w.data(), wd, dw->data(), w.size(), sum, d_->stream()));
    double host = 0;
    PS_CUDA(cudaMemcpyAsync(&host, sum, sizeof(double), cudaMemcpyDeviceToHost, d_->stream()));
    PS_RETURN_IF_ERROR(d_->Synchronize());
    return wd * host / 2;
  }

 private:
  const std::unique_ptr<CudaDevice> d_;
  Tensor losses_, sum_;
};

}  // namespace
}  // namespace cuda

StatusOr<std::unique_ptr<Backend>> CreateGpuBackend(int ordinal) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<cuda::CudaDevice> device, cuda::CudaDevice::Open(ordinal));
  return std::unique_ptr<Backend>(std::make_unique<cuda::CudaBackend>(std::move(device)));
}

}  // namespace nn
}  // namespace pstrain
