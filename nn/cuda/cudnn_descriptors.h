// cuDNN's descriptors as owning values, and the NHWC tensor descriptor of a
// shape. cuDNN calls every 4-D shape [n, c, h, w]; pstrain's tensors are
// NHWC, which the format flag tells it.
#ifndef PSTRAIN_NN_CUDA_CUDNN_DESCRIPTORS_H_
#define PSTRAIN_NN_CUDA_CUDNN_DESCRIPTORS_H_

#include <cudnn.h>

#include <cstdint>

#include "core/status.h"
#include "core/tensor.h"
#include "nn/cuda/cuda_status.h"

namespace pstrain {
namespace nn {
namespace cuda {

// The scaling factors of cuDNN's and cuBLAS's calls (y = kOne * op(x) +
// kZero * y): the pointers they take.
inline constexpr float kOne = 1.0f, kZero = 0.0f;

// T: a cudnn*Descriptor_t; Create and Destroy: its cuDNN functions.
template <typename T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class Descriptor {
 public:
  Descriptor() = default;
  ~Descriptor() {
    if (d_ != nullptr) Destroy(d_);
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  // Made on first use; Internal naming the call when cuDNN cannot.
  StatusOr<T> Get() {
    if (d_ == nullptr) PS_CUDNN(Create(&d_));
    return d_;
  }
  T get() const { return d_; }

 private:
  T d_ = nullptr;
};

using TensorDescriptor =
    Descriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    Descriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor =
    Descriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
               cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor = Descriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                                     cudnnDestroyPoolingDescriptor>;
using LrnDescriptor =
    Descriptor<cudnnLRNDescriptor_t, cudnnCreateLRNDescriptor, cudnnDestroyLRNDescriptor>;

// `d` set to float NHWC of n images h x w with c channels. InvalidArgument
// when a size does not fit cuDNN's int.
Status SetNhwc(TensorDescriptor* d, int64_t n, int64_t h, int64_t w, int64_t c);
// The same for a tensor of shape [N, H, W, C], or [N, C] as N x 1 x 1 x C.
Status SetNhwc(TensorDescriptor* d, const Shape& shape);

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CUDA_CUDNN_DESCRIPTORS_H_
