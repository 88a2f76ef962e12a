#include "nn/cuda/cuda_device.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "nn/cuda/cuda_status.h"
#include "nn/cuda/elementwise_kernels.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

// cudaMalloc and friends on one device, for the caching allocator.
class CudaRawMemory : public RawDeviceMemory {
 public:
  CudaRawMemory(int ordinal, cudaStream_t stream) : ordinal_(ordinal), stream_(stream) {}
  void* Malloc(size_t bytes) override {
    void* p = nullptr;
    if (cudaSetDevice(ordinal_) != cudaSuccess || cudaMalloc(&p, bytes) != cudaSuccess) {
      (void)cudaGetLastError();  // an out-of-memory is answered by nullptr
      return nullptr;
    }
    return p;
  }
  void Free(void* p) override {
    cudaSetDevice(ordinal_);
    cudaFree(p);
  }
  // Queued on the stream, as everything else that touches the block.
  void Copy(void* dst, const void* src, size_t bytes) override {
    cudaSetDevice(ordinal_);
    cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_);
  }

 private:
  const int ordinal_;
  const cudaStream_t stream_;
};

}  // namespace

StatusOr<std::unique_ptr<CudaDevice>> CudaDevice::Open(int ordinal) {
  std::unique_ptr<CudaDevice> d(new CudaDevice(ordinal));
  PS_CUDA(cudaSetDevice(ordinal));
  cudaDeviceProp prop;
  PS_CUDA(cudaGetDeviceProperties(&prop, ordinal));
  d->name_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) +
             std::to_string(prop.minor) + ")";
  PS_CUDA(cudaStreamCreateWithFlags(&d->stream_, cudaStreamNonBlocking));
  PS_CUDNN(cudnnCreate(&d->cudnn_));
  PS_CUDNN(cudnnSetStream(d->cudnn_, d->stream_));
  PS_ASSIGN_OR_RETURN(d->blas_, Cublas());
  PS_CUBLAS(d->blas_->Create(&d->cublas_));
  PS_CUBLAS(d->blas_->SetStream(d->cublas_, d->stream_));
  d->memory_ =
      std::make_unique<CachingAllocator>(std::make_unique<CudaRawMemory>(ordinal, d->stream_));
  return d;
}

CudaDevice::~CudaDevice() {
  cudaSetDevice(ordinal_);
  if (stream_ != nullptr) cudaStreamSynchronize(stream_);
  // The tensors of this device go before its allocator.
  workspace_ = Tensor();
  ones_ = Tensor();
  labels_ = Tensor();
  memory_.reset();
  if (upload_ != nullptr) cudaFreeHost(upload_);
  if (download_ != nullptr) cudaFreeHost(download_);
  if (cublas_ != nullptr) blas_->Destroy(cublas_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (stream_ != nullptr) cudaStreamDestroy(stream_);
}

Status CudaDevice::MakeCurrent() {
  PS_CUDA(cudaSetDevice(ordinal_));
  return OkStatus();
}

Status CudaDevice::Ensure(Tensor* t, const Shape& shape) {
  if (t->device() == memory_.get() && t->shape() == shape) return OkStatus();
  auto fresh = Tensor::OnDevice(shape, memory_.get());
  if (!fresh.ok()) return fresh.status().Annotate(name_);
  *t = std::move(fresh).value();
  return OkStatus();
}

StatusOr<char*> CudaDevice::Staging(size_t bytes) {
  bytes = (bytes + 255) / 256 * 256;
  if (upload_used_ + bytes > upload_capacity_) {
    // Start over once every copy out of the buffer has run.
    PS_CUDA(cudaStreamSynchronize(stream_));
    upload_used_ = 0;
    if (bytes > upload_capacity_) {
      if (upload_ != nullptr) PS_CUDA(cudaFreeHost(upload_));
      upload_ = nullptr;
      upload_capacity_ = std::max(bytes, 2 * upload_capacity_);
      PS_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&upload_), upload_capacity_,
                            cudaHostAllocDefault));
    }
  }
  char* p = upload_ + upload_used_;
  upload_used_ += bytes;
  return p;
}

Status CudaDevice::Upload(const Tensor& host, Tensor* device) {
  if (host.device() != nullptr) return FailedPrecondition("upload: the source is not on the host");
  PS_RETURN_IF_ERROR(Ensure(device, host.shape()));
  if (host.size() == 0) return OkStatus();
  PS_ASSIGN_OR_RETURN(char* staged, Staging(host.bytes()));
  std::memcpy(staged, host.data(), host.bytes());
  PS_CUDA(cudaMemcpyAsync(device->data(), staged, host.bytes(), cudaMemcpyHostToDevice, stream_));
  return OkStatus();
}

StatusOr<const int32_t*> CudaDevice::UploadInts(const int32_t* values, int64_t n) {
  // Held in a float tensor's block: 4 bytes an element either way.
  PS_RETURN_IF_ERROR(Ensure(&labels_, {std::max<int64_t>(n, 1)}));
  const size_t bytes = static_cast<size_t>(n) * sizeof(int32_t);
  if (n > 0) {
    PS_ASSIGN_OR_RETURN(char* staged, Staging(bytes));
    std::memcpy(staged, values, bytes);
    PS_CUDA(cudaMemcpyAsync(labels_.data(), staged, bytes, cudaMemcpyHostToDevice, stream_));
  }
  return reinterpret_cast<const int32_t*>(labels_.data());
}

Status CudaDevice::Download(const Tensor& device, Tensor* host) {
  if (device.size() > 0 && device.device() != memory_.get()) {
    return FailedPrecondition("download: the tensor is not in " + name_ + "'s memory");
  }
  // A view that owns what keeps its memory (an arena's) is written in
  // place; one borrowing another's memory gets its own.
  if (host->shape() != device.shape() || host->device() != nullptr || host->borrows_data()) {
    *host = Tensor(device.shape(), Tensor::kUninitialized);
  }
  if (device.size() == 0) return OkStatus();
  if (device.bytes() > download_capacity_) {
    if (download_ != nullptr) PS_CUDA(cudaFreeHost(download_));
    download_ = nullptr;
    download_capacity_ = std::max(device.bytes(), 2 * download_capacity_);
    PS_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&download_), download_capacity_,
                          cudaHostAllocDefault));
  }
  PS_CUDA(
      cudaMemcpyAsync(download_, device.data(), device.bytes(), cudaMemcpyDeviceToHost, stream_));
  PS_CUDA(cudaStreamSynchronize(stream_));
  upload_used_ = 0;  // every upload queued before has run too
  std::memcpy(host->data(), download_, device.bytes());
  return OkStatus();
}

StatusOr<void*> CudaDevice::Workspace(size_t bytes) {
  if (bytes == 0) return nullptr;
  const int64_t floats = static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float));
  if (workspace_.size() < floats) {
    // The old block goes back to the cache; work queued on it runs first,
    // the stream being in order.
    PS_RETURN_IF_ERROR(Ensure(&workspace_, {floats}));
  }
  return static_cast<void*>(workspace_.data());
}

StatusOr<const float*> CudaDevice::Ones(int64_t n) {
  if (ones_.size() < n) {
    PS_RETURN_IF_ERROR(Ensure(&ones_, {n}));
    PS_RETURN_IF_ERROR(FillKernel(ones_.data(), 1.0f, n, stream_));
  }
  return static_cast<const float*>(ones_.data());
}

Status CudaDevice::Synchronize() {
  PS_CUDA(cudaStreamSynchronize(stream_));
  return OkStatus();
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
