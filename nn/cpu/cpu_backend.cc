#include "nn/cpu/cpu_backend.h"

#include <omp.h>

#include <string>

#include "nn/cpu/avg_pool.h"
#include "nn/cpu/batch_norm.h"
#include "nn/cpu/conv2d.h"
#include "nn/cpu/dense.h"
#include "nn/cpu/dnnl_context.h"
#include "nn/cpu/dropout.h"
#include "nn/cpu/few_channel_conv.h"
#include "nn/cpu/lrn.h"
#include "nn/cpu/max_pool.h"
#include "nn/cpu/relu.h"
#include "nn/cpu/softmax_xent.h"
#include "nn/cpu/winograd_conv.h"
#include "nn/elementwise.h"

namespace pstrain {
namespace nn {
namespace cpu {
namespace {

class CpuBackend : public Backend {
 public:
  std::string Describe() const override {
    const dnnl_version_t* v = dnnl_version();
    const int threads = omp_get_max_threads();
    return "cpu (oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
           std::to_string(v->patch) + ", " + std::to_string(threads) +
           (threads == 1 ? " thread)" : " threads)");
  }

  StatusOr<std::unique_ptr<AffineKernel>> Conv2D(const Conv2DConfig& config) override {
    if (WinogradConv2D::Supports(config)) {
      return std::unique_ptr<AffineKernel>(std::make_unique<WinogradConv2D>(config));
    }
    if (FewChannelConv2D::Supports(config)) {
      return std::unique_ptr<AffineKernel>(std::make_unique<FewChannelConv2D>(config));
    }
    return std::unique_ptr<AffineKernel>(std::make_unique<cpu::Conv2D>(&dnnl_, config));
  }
  StatusOr<std::unique_ptr<AffineKernel>> Dense(int64_t in, int64_t out) override {
    return std::unique_ptr<AffineKernel>(std::make_unique<cpu::Dense>(&dnnl_, in, out));
  }
  StatusOr<std::unique_ptr<PoolKernel>> MaxPool(const PoolConfig& config) override {
    return std::unique_ptr<PoolKernel>(std::make_unique<cpu::MaxPool>(config));
  }
  StatusOr<std::unique_ptr<PoolKernel>> AvgPool(const PoolConfig& config) override {
    return std::unique_ptr<PoolKernel>(std::make_unique<cpu::AvgPool>(config));
  }
  StatusOr<std::unique_ptr<LrnKernel>> Lrn(const LrnConfig& config) override {
    PS_ASSIGN_OR_RETURN(cpu::Lrn lrn, cpu::Lrn::Create(config));
    return std::unique_ptr<LrnKernel>(std::make_unique<cpu::Lrn>(std::move(lrn)));
  }
  StatusOr<std::unique_ptr<DropoutKernel>> Dropout(float keep_prob, uint64_t seed) override {
    PS_ASSIGN_OR_RETURN(cpu::Dropout dropout, cpu::Dropout::Create(keep_prob, seed));
    return std::unique_ptr<DropoutKernel>(std::make_unique<cpu::Dropout>(std::move(dropout)));
  }
  StatusOr<std::unique_ptr<BatchNormKernel>> BatchNorm(const BatchNormConfig& config) override {
    return std::unique_ptr<BatchNormKernel>(std::make_unique<cpu::BatchNorm>(config));
  }

  Status Relu(const Tensor& x, Tensor* y) override {
    ReluForward(x, y);
    return OkStatus();
  }
  Status ReluGrad(const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (y.shape() != dy.shape()) {
      return InvalidArgument("relu: output " + ShapeString(y.shape()) + " but gradient " +
                             ShapeString(dy.shape()));
    }
    ReluBackward(y, dy, dx);
    return OkStatus();
  }
  StatusOr<float> SoftmaxCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels,
                                      Tensor* dlogits) override {
    return cpu::SoftmaxCrossEntropy(logits, labels, dlogits);
  }
  StatusOr<double> AddWeightDecay(const Tensor& w, float wd, Tensor* dw) override {
    if (w.shape() != dw->shape()) {
      return InvalidArgument("weight decay: variable " + ShapeString(w.shape()) + " but gradient " +
                             ShapeString(dw->shape()));
    }
    const float* wp = w.data();
    float* dwp = dw->data();
    double sum = 0;
    for (int64_t i = 0; i < w.size(); ++i) {
      sum += static_cast<double>(wp[i]) * wp[i];
      dwp[i] = WeightDecayGrad(dwp[i], wp[i], wd);
    }
    return wd * sum / 2;
  }

 private:
  DnnlContext dnnl_;  // borrowed by the oneDNN kernels
};

}  // namespace

StatusOr<std::unique_ptr<Backend>> CreateCpuBackend() {
  try {
    return std::unique_ptr<Backend>(std::make_unique<CpuBackend>());
  } catch (const dnnl::error& e) {
    return Internal(std::string("cpu backend: oneDNN: ") + e.what());
  }
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
