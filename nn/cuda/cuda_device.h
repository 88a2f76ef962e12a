// CudaDevice: one GPU as a backend uses it: its stream (all of the
// backend's work is queued on it, in order), cuDNN and cuBLAS handles bound
// to that stream, a caching allocator for its memory, and pinned host
// buffers through which tensors move between the host and the device.
//
// One backend (one tower) per device; its calls come from one thread at a
// time, though not always the same thread (MakeCurrent binds the device).
#ifndef PSTRAIN_NN_CUDA_CUDA_DEVICE_H_
#define PSTRAIN_NN_CUDA_CUDA_DEVICE_H_

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/caching_allocator.h"
#include "core/status.h"
#include "core/tensor.h"
#include "nn/cuda/cublas_library.h"

namespace pstrain {
namespace nn {
namespace cuda {

class CudaDevice {
 public:
  // Internal naming the call when the device cannot be opened.
  static StatusOr<std::unique_ptr<CudaDevice>> Open(int ordinal);
  ~CudaDevice();
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  int ordinal() const { return ordinal_; }
  const std::string& name() const { return name_; }  // "NVIDIA H100 80GB HBM3 (sm_90)"
  cudaStream_t stream() const { return stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  const CublasLibrary& blas() const { return *blas_; }
  CachingAllocator* memory() { return memory_.get(); }

  // Makes this the calling thread's current device.
  Status MakeCurrent();

  // *t uninitialized in device memory, shaped `shape` (kept when it is).
  Status Ensure(Tensor* t, const Shape& shape);
  // *device = host, through a pinned buffer; queued, the host tensor may
  // change as soon as this returns.
  Status Upload(const Tensor& host, Tensor* device);
  // *host = device, once the work queued before it is done.
  Status Download(const Tensor& device, Tensor* host);
  // A device copy of n int32 values (labels), queued like Upload.
  StatusOr<const int32_t*> UploadInts(const int32_t* values, int64_t n);
  // Device scratch of at least `bytes` (cuDNN's workspace), valid until the
  // next call; queued work that uses it finishes before it is replaced.
  StatusOr<void*> Workspace(size_t bytes);
  // n ones on the device (cuBLAS's row sums), valid until the next call.
  StatusOr<const float*> Ones(int64_t n);
  // Waits for everything queued.
  Status Synchronize();

 private:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {}
  // `bytes` of the pinned upload buffer, waiting for the copies queued from
  // it first when it must start over.
  StatusOr<char*> Staging(size_t bytes);

  const int ordinal_;
  std::string name_;
  cudaStream_t stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  const CublasLibrary* blas_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  std::unique_ptr<CachingAllocator> memory_;
  // Uploads take consecutive pieces of a pinned buffer; the buffer starts
  // over once the stream has passed every copy out of it.
  char* upload_ = nullptr;
  size_t upload_capacity_ = 0, upload_used_ = 0;
  char* download_ = nullptr;  // pinned, for Download
  size_t download_capacity_ = 0;
  Tensor workspace_, ones_, labels_;
};

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_CUDA_DEVICE_H_
