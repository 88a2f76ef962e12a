// Max and average pooling on cuDNN. Where TensorFlow's SAME padding is
// uneven (the smaller half before), max pooling pads the input explicitly
// with the lowest float (a padded cell never wins) and pools without
// padding; average pooling, whose padded cells must not be counted, runs
// the backend's own kernel there.
#include <cudnn.h>

#include <limits>

#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/cuda_status.h"
#include "nn/cuda/cudnn_descriptors.h"
#include "nn/cuda/elementwise_kernels.h"
#include "nn/padding.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

class CudaPool : public PoolKernel {
 public:
  CudaPool(CudaDevice* device, const PoolConfig& config, bool max)
      : d_(device), c_(config), max_(max) {}

  Status Forward(const Tensor& x, Tensor* y) override {
    if (x.rank() != 4)
      return InvalidArgument("pool: input " + ShapeString(x.shape()) + " is not NHWC");
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "pool forward", {&x}));
    PS_RETURN_IF_ERROR(Plan(x.shape()));
    PS_RETURN_IF_ERROR(d_->Ensure(y, {x.dim(0), h_.out, w_.out, x.dim(3)}));
    if (!max_ && uneven_) return AvgPoolForward(Geometry(), x.data(), y->data(), d_->stream());
    // cuDNN's backward pass reads the forward's input and output: kept.
    if (uneven_) {
      PS_RETURN_IF_ERROR(PadNhwc(x.data(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), h_.pad_before,
                                 h_.pad_after, w_.pad_before, w_.pad_after,
                                 std::numeric_limits<float>::lowest(), in_.data(), d_->stream()));
    } else {
      in_ = x;
    }
    PS_CUDNN(cudnnPoolingForward(d_->cudnn(), pool_desc_.get(), &kOne, in_desc_.get(), in_.data(),
                                 &kZero, out_desc_.get(), y->data()));
    out_ = *y;
    return OkStatus();
  }

  Status Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) override {
    if (x_shape != x_shape_) {
      return FailedPrecondition("pool: no forward of shape " + ShapeString(x_shape));
    }
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "pool backward", {&dy}));
    if (dy.shape() != Shape{x_shape[0], h_.out, w_.out, x_shape[3]}) {
      return InvalidArgument("pool: gradient " + ShapeString(dy.shape()));
    }
    PS_RETURN_IF_ERROR(d_->Ensure(dx, x_shape));
    if (!max_ && uneven_) return AvgPoolBackward(Geometry(), dy.data(), dx->data(), d_->stream());
    Tensor* target = dx;
    if (uneven_) {
      PS_RETURN_IF_ERROR(d_->Ensure(&grad_in_, in_.shape()));
      target = &grad_in_;
    }
    PS_CUDNN(cudnnPoolingBackward(d_->cudnn(), pool_desc_.get(), &kOne, out_desc_.get(),
                                  out_.data(), out_desc_.get(), dy.data(), in_desc_.get(),
                                  in_.data(), &kZero, in_desc_.get(), target->data()));
    if (!uneven_) return OkStatus();
    const Shape& p = in_.shape();
    return CropNhwc(grad_in_.data(), p[0], p[1], p[2], p[3], h_.pad_before, w_.pad_before,
                    x_shape[1], x_shape[2], dx->data(), d_->stream());
  }

 private:
  Status Plan(const Shape& x) {
    if (x == x_shape_) return OkStatus();
    h_ = ComputeWindow(x[1], c_.window, c_.stride, c_.padding);
    w_ = ComputeWindow(x[2], c_.window, c_.stride, c_.padding);
    if (h_.out <= 0 || w_.out <= 0) {
      return InvalidArgument("pool: input " + ShapeString(x) + " is smaller than the window");
    }
    uneven_ = h_.pad_before != h_.pad_after || w_.pad_before != w_.pad_after;
    x_shape_ = x;
    if (!max_ && uneven_) return OkStatus();  // the backend's own kernel
    const int64_t in_h = uneven_ ? x[1] + h_.pad_before + h_.pad_after : x[1];
    const int64_t in_w = uneven_ ? x[2] + w_.pad_before + w_.pad_after : x[2];
    if (uneven_) PS_RETURN_IF_ERROR(d_->Ensure(&in_, {x[0], in_h, in_w, x[3]}));
    PS_RETURN_IF_ERROR(SetNhwc(&in_desc_, x[0], in_h, in_w, x[3]));
    PS_RETURN_IF_ERROR(SetNhwc(&out_desc_, x[0], h_.out, w_.out, x[3]));
    PS_ASSIGN_OR_RETURN(cudnnPoolingDescriptor_t pool, pool_desc_.Get());
    const cudnnPoolingMode_t mode =
        max_ ? CUDNN_POOLING_MAX_DETERMINISTIC : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    const int pad_h = uneven_ ? 0 : static_cast<int>(h_.pad_before);
    const int pad_w = uneven_ ? 0 : static_cast<int>(w_.pad_before);
    PS_CUDNN(cudnnSetPooling2dDescriptor(pool, mode, CUDNN_NOT_PROPAGATE_NAN,
                                         static_cast<int>(c_.window), static_cast<int>(c_.window),
                                         pad_h, pad_w, static_cast<int>(c_.stride),
                                         static_cast<int>(c_.stride)));
    return OkStatus();
  }

  AvgPoolGeometry Geometry() const {
    return {x_shape_[0], x_shape_[1], x_shape_[2], x_shape_[3],   h_.out,
            w_.out,      c_.window,   c_.stride,   h_.pad_before, w_.pad_before};
  }

  CudaDevice* const d_;
  const PoolConfig c_;
  const bool max_;
  Shape x_shape_;
  WindowDim h_{}, w_{};
  bool uneven_ = false;
  TensorDescriptor in_desc_, out_desc_;
  PoolingDescriptor pool_desc_;
  Tensor in_, out_, grad_in_;  // the forward's input (padded) and output
};

}  // namespace

std::unique_ptr<PoolKernel> MakePool(CudaDevice* device, const PoolConfig& config, bool max) {
  return std::make_unique<CudaPool>(device, config, max);
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
