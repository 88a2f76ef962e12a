#include "nn/fake_device_backend.h"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "nn/cpu/cpu_backend.h"

namespace pstrain {
namespace nn {
namespace {

class FakeDeviceMemory : public DeviceMemory {
 public:
  explicit FakeDeviceMemory(FakeDeviceCounters* counters) : counters_(counters) {}
  ~FakeDeviceMemory() override {
    for (float* p : live_) std::free(p);
  }

  float* Allocate(size_t bytes) override {
    auto* p = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
    std::lock_guard<std::mutex> lock(mu_);
    live_.insert(p);
    ++counters_->live_blocks;
    return p;
  }
  void Release(float* p) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (live_.erase(p) == 1) {
      --counters_->live_blocks;
      std::free(p);
    }
  }
  void CopyWithin(float* dst, const float* src, size_t bytes) override {
    std::memmove(dst, src, bytes);
  }

 private:
  FakeDeviceCounters* const counters_;
  std::mutex mu_;
  std::set<float*> live_;
};

// The checks and conversions every wrapped kernel makes.
class Device {
 public:
  explicit Device(FakeDeviceCounters* counters) : memory_(counters) {}
  DeviceMemory* memory() { return &memory_; }

  // A host view of an operand, or FailedPrecondition when it is not here.
  StatusOr<Tensor> In(const Tensor& t, const char* op) {
    if (t.size() > 0 && t.device() != &memory_) {
      return FailedPrecondition(std::string(op) + ": an operand of " + ShapeString(t.shape()) +
                                " is not in device memory");
    }
    return Tensor::View(t.shape(), const_cast<float*>(t.data()));
  }
  // Runs `kernel` with a host view of *out (when it is here) and leaves
  // its result in *out, in device memory.
  template <typename Kernel>
  Status Out(Tensor* out, const char* op, Kernel kernel) {
    if (out->size() > 0 && out->device() != &memory_ && out->device() != nullptr) {
      return FailedPrecondition(std::string(op) + ": output in another device's memory");
    }
    Tensor host;
    if (out->device() == &memory_) host = Tensor::View(out->shape(), out->data());
    PS_RETURN_IF_ERROR(kernel(&host));
    if (out->device() == &memory_ && host.data() == out->data()) {
      out->Reshape(host.shape());
      return OkStatus();
    }
    return Place(host, out);
  }
  // *out = host's contents in device memory.
  Status Place(const Tensor& host, Tensor* out) {
    if (out->shape() != host.shape() || out->device() != &memory_) {
      PS_ASSIGN_OR_RETURN(*out, Tensor::OnDevice(host.shape(), &memory_));
    }
    if (host.size() > 0) std::memcpy(out->data(), host.data(), host.bytes());
    return OkStatus();
  }

 private:
  FakeDeviceMemory memory_;
};

class FakeAffine : public AffineKernel {
 public:
  FakeAffine(Device* d, std::unique_ptr<AffineKernel> k) : d_(d), k_(std::move(k)) {}
  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "affine forward"));
    PS_ASSIGN_OR_RETURN(Tensor hw, d_->In(w, "affine forward"));
    PS_ASSIGN_OR_RETURN(Tensor hb, d_->In(b, "affine forward"));
    return d_->Out(y, "affine forward", [&](Tensor* hy) { return k_->Forward(hx, hw, hb, hy); });
  }
  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "affine backward"));
    PS_ASSIGN_OR_RETURN(Tensor hw, d_->In(w, "affine backward"));
    PS_ASSIGN_OR_RETURN(Tensor hdy, d_->In(dy, "affine backward"));
    Tensor hdx, hdw, hdb;
    PS_RETURN_IF_ERROR(k_->Backward(hx, hw, hdy, dx != nullptr ? &hdx : nullptr, &hdw, &hdb));
    if (dx != nullptr) PS_RETURN_IF_ERROR(d_->Place(hdx, dx));
    PS_RETURN_IF_ERROR(d_->Place(hdw, dw));
    return d_->Place(hdb, db);
  }

 private:
  Device* const d_;
  const std::unique_ptr<AffineKernel> k_;
};

class FakePool : public PoolKernel {
 public:
  FakePool(Device* d, std::unique_ptr<PoolKernel> k) : d_(d), k_(std::move(k)) {}
  Status Forward(const Tensor& x, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "pool forward"));
    return d_->Out(y, "pool forward", [&](Tensor* hy) { return k_->Forward(hx, hy); });
  }
  Status Infer(const Tensor& x, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "pool inference"));
    return d_->Out(y, "pool inference", [&](Tensor* hy) { return k_->Infer(hx, hy); });
  }
  Status Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) override {
    PS_ASSIGN_OR_RETURN(Tensor hdy, d_->In(dy, "pool backward"));
    return d_->Out(dx, "pool backward", [&](Tensor* h) { return k_->Backward(x_shape, hdy, h); });
  }

 private:
  Device* const d_;
  const std::unique_ptr<PoolKernel> k_;
};

class FakeLrn : public LrnKernel {
 public:
  FakeLrn(Device* d, std::unique_ptr<LrnKernel> k) : d_(d), k_(std::move(k)) {}
  Status Forward(const Tensor& x, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "lrn forward"));
    return d_->Out(y, "lrn forward", [&](Tensor* hy) { return k_->Forward(hx, hy); });
  }
  Status Backward(const Tensor& x, const Tensor& dy, Tensor* dx) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "lrn backward"));
    PS_ASSIGN_OR_RETURN(Tensor hdy, d_->In(dy, "lrn backward"));
    return d_->Out(dx, "lrn backward", [&](Tensor* h) { return k_->Backward(hx, hdy, h); });
  }

 private:
  Device* const d_;
  const std::unique_ptr<LrnKernel> k_;
};

class FakeDropout : public DropoutKernel {
 public:
  FakeDropout(Device* d, std::unique_ptr<DropoutKernel> k) : d_(d), k_(std::move(k)) {}
  Status Forward(const Tensor& x, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "dropout forward"));
    return d_->Out(y, "dropout forward", [&](Tensor* hy) { return k_->Forward(hx, hy); });
  }
  Status Backward(const Tensor& dy, Tensor* dx) override {
    PS_ASSIGN_OR_RETURN(Tensor hdy, d_->In(dy, "dropout backward"));
    return d_->Out(dx, "dropout backward", [&](Tensor* h) { return k_->Backward(hdy, h); });
  }

 private:
  Device* const d_;
  const std::unique_ptr<DropoutKernel> k_;
};

class FakeBatchNorm : public BatchNormKernel {
 public:
  FakeBatchNorm(Device* d, std::unique_ptr<BatchNormKernel> k) : d_(d), k_(std::move(k)) {}
  Status ForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                         Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "batch norm"));
    PS_ASSIGN_OR_RETURN(Tensor hg, d_->In(gamma, "batch norm"));
    PS_ASSIGN_OR_RETURN(Tensor hb, d_->In(beta, "batch norm"));
    return d_->Out(y, "batch norm",
                   [&](Tensor* hy) { return k_->ForwardTraining(hx, hg, hb, hy); });
  }
  Status ForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                          const Tensor& moving_mean, const Tensor& moving_variance,
                          Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, d_->In(x, "batch norm"));
    PS_ASSIGN_OR_RETURN(Tensor hg, d_->In(gamma, "batch norm"));
    PS_ASSIGN_OR_RETURN(Tensor hb, d_->In(beta, "batch norm"));
    PS_ASSIGN_OR_RETURN(Tensor hm, d_->In(moving_mean, "batch norm"));
    PS_ASSIGN_OR_RETURN(Tensor hv, d_->In(moving_variance, "batch norm"));
    return d_->Out(y, "batch norm",
                   [&](Tensor* hy) { return k_->ForwardInference(hx, hg, hb, hm, hv, hy); });
  }
  Status Backward(const Tensor& gamma, const Tensor& dy, Tensor* dx, Tensor* dgamma,
                  Tensor* dbeta) override {
    PS_ASSIGN_OR_RETURN(Tensor hg, d_->In(gamma, "batch norm backward"));
    PS_ASSIGN_OR_RETURN(Tensor hdy, d_->In(dy, "batch norm backward"));
    Tensor hdx, hdg, hdb;
    PS_RETURN_IF_ERROR(k_->Backward(hg, hdy, &hdx, &hdg, &hdb));
    PS_RETURN_IF_ERROR(d_->Place(hdx, dx));
    PS_RETURN_IF_ERROR(d_->Place(hdg, dgamma));
    return d_->Place(hdb, dbeta);
  }
  Status MovingAverageDeltas(const Tensor& moving_mean, const Tensor& moving_variance,
                             Tensor* mean_delta, Tensor* variance_delta) override {
    PS_ASSIGN_OR_RETURN(Tensor hm, d_->In(moving_mean, "batch norm deltas"));
    PS_ASSIGN_OR_RETURN(Tensor hv, d_->In(moving_variance, "batch norm deltas"));
    Tensor hmd, hvd;
    PS_RETURN_IF_ERROR(k_->MovingAverageDeltas(hm, hv, &hmd, &hvd));
    PS_RETURN_IF_ERROR(d_->Place(hmd, mean_delta));
    return d_->Place(hvd, variance_delta);
  }

 private:
  Device* const d_;
  const std::unique_ptr<BatchNormKernel> k_;
};

class FakeDeviceBackend : public Backend {
 public:
  FakeDeviceBackend(std::unique_ptr<Backend> cpu, FakeDeviceCounters* counters)
      : counters_(counters), device_(counters), cpu_(std::move(cpu)) {}

  std::string Describe() const override { return "fake device over " + cpu_->Describe(); }
  DeviceMemory* memory() override { return device_.memory(); }

  Status Upload(const Tensor& host, Tensor* device) override {
    if (host.device() != nullptr)
      return FailedPrecondition("upload: the source is not on the host");
    ++counters_->uploads;
    return device_.Place(host, device);
  }
  Status Download(const Tensor& device, Tensor* host) override {
    PS_ASSIGN_OR_RETURN(Tensor view, device_.In(device, "download"));
    ++counters_->downloads;
    *host = view;  // a copy the host owns
    return OkStatus();
  }
  Status CopyAs(const Tensor& x, const Shape& shape, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, device_.In(x, "copy"));
    return device_.Out(y, "copy", [&](Tensor* hy) { return cpu_->CopyAs(hx, shape, hy); });
  }
  StatusOr<Tensor> Zeros(const Shape& shape) override {
    Tensor t;
    PS_RETURN_IF_ERROR(device_.Place(Tensor(shape), &t));
    return t;
  }

  StatusOr<std::unique_ptr<AffineKernel>> Conv2D(const Conv2DConfig& config) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->Conv2D(config));
    return std::unique_ptr<AffineKernel>(std::make_unique<FakeAffine>(&device_, std::move(k)));
  }
  StatusOr<std::unique_ptr<AffineKernel>> Dense(int64_t in, int64_t out) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->Dense(in, out));
    return std::unique_ptr<AffineKernel>(std::make_unique<FakeAffine>(&device_, std::move(k)));
  }
  StatusOr<std::unique_ptr<PoolKernel>> MaxPool(const PoolConfig& config) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->MaxPool(config));
    return std::unique_ptr<PoolKernel>(std::make_unique<FakePool>(&device_, std::move(k)));
  }
  StatusOr<std::unique_ptr<PoolKernel>> AvgPool(const PoolConfig& config) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->AvgPool(config));
    return std::unique_ptr<PoolKernel>(std::make_unique<FakePool>(&device_, std::move(k)));
  }
  StatusOr<std::unique_ptr<LrnKernel>> Lrn(const LrnConfig& config) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->Lrn(config));
    return std::unique_ptr<LrnKernel>(std::make_unique<FakeLrn>(&device_, std::move(k)));
  }
  StatusOr<std::unique_ptr<DropoutKernel>> Dropout(float keep_prob, uint64_t seed) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->Dropout(keep_prob, seed));
    return std::unique_ptr<DropoutKernel>(std::make_unique<FakeDropout>(&device_, std::move(k)));
  }
  StatusOr<std::unique_ptr<BatchNormKernel>> BatchNorm(const BatchNormConfig& config) override {
    PS_ASSIGN_OR_RETURN(auto k, cpu_->BatchNorm(config));
    return std::unique_ptr<BatchNormKernel>(
        std::make_unique<FakeBatchNorm>(&device_, std::move(k)));
  }

  Status Relu(const Tensor& x, Tensor* y) override {
    PS_ASSIGN_OR_RETURN(Tensor hx, device_.In(x, "relu"));
    return device_.Out(y, "relu", [&](Tensor* hy) { return cpu_->Relu(hx, hy); });
  }
  Status ReluGrad(const Tensor& y, const Tensor& dy, Tensor* dx) override {
    PS_ASSIGN_OR_RETURN(Tensor hy, device_.In(y, "relu grad"));
    PS_ASSIGN_OR_RETURN(Tensor hdy, device_.In(dy, "relu grad"));
    return device_.Out(dx, "relu grad", [&](Tensor* h) { return cpu_->ReluGrad(hy, hdy, h); });
  }
  StatusOr<float> SoftmaxCrossEntropy(const Tensor& logits, const std::vector<int32_t>& labels,
                                      Tensor* dlogits) override {
    PS_ASSIGN_OR_RETURN(Tensor hl, device_.In(logits, "softmax cross-entropy"));
    float loss = 0;
    PS_RETURN_IF_ERROR(device_.Out(dlogits, "softmax cross-entropy", [&](Tensor* h) {
      PS_ASSIGN_OR_RETURN(loss, cpu_->SoftmaxCrossEntropy(hl, labels, h));
      return OkStatus();
    }));
    return loss;
  }
  StatusOr<double> AddWeightDecay(const Tensor& w, float wd, Tensor* dw) override {
    PS_ASSIGN_OR_RETURN(Tensor hw, device_.In(w, "weight decay"));
    PS_ASSIGN_OR_RETURN(Tensor hdw, device_.In(*dw, "weight decay"));
    return cpu_->AddWeightDecay(hw, wd, &hdw);  // through the view, in place
  }

 private:
  FakeDeviceCounters* const counters_;
  Device device_;  // borrowed by the kernels
  const std::unique_ptr<Backend> cpu_;
};

}  // namespace

StatusOr<std::unique_ptr<Backend>> CreateFakeDeviceBackend(FakeDeviceCounters* counters) {
  static FakeDeviceCounters unused;
  PS_ASSIGN_OR_RETURN(std::unique_ptr<Backend> cpu, cpu::CreateCpuBackend());
  return std::unique_ptr<Backend>(std::make_unique<FakeDeviceBackend>(
      std::move(cpu), counters != nullptr ? counters : &unused));
}

}  // namespace nn
}  // namespace pstrain
