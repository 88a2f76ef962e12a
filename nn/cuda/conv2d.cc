// tf.nn.conv2d on cuDNN. pstrain keeps filters HWIO, which cuDNN does not
// take: each step transposes them to OHWI (cuDNN's NHWC filter layout, KRSC)
// and the filter gradient back. TensorFlow's SAME padding puts the smaller
// half before; where the halves differ, the input is padded explicitly and
// cuDNN pads nothing. Algorithms are chosen once per input shape from
// cuDNN's heuristics, fp32 FMA only (no TF32), so that results match the
// CPU backend's.
#include <cudnn.h>

#include "nn/conv2d_shapes.h"
#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/cuda_status.h"
#include "nn/cuda/cudnn_descriptors.h"
#include "nn/cuda/elementwise_kernels.h"
#include "nn/padding.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

class CudaConv2D : public AffineKernel {
 public:
  CudaConv2D(CudaDevice* device, const Conv2DConfig& config) : d_(device), c_(config) {}

  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override {
    PS_RETURN_IF_ERROR(CheckConv2DOperands(c_, x, w, &b, nullptr));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "conv2d forward", {&x, &w, &b}));
    PS_RETURN_IF_ERROR(Plan(x.shape()));
    PS_RETURN_IF_ERROR(FilterToOhwi(w));
    PS_ASSIGN_OR_RETURN(const float* in, Input(x));
    PS_RETURN_IF_ERROR(d_->Ensure(y, Conv2DOutputShape(c_, x.shape())));
    PS_ASSIGN_OR_RETURN(void* ws, d_->Workspace(plan_.forward_bytes));
    PS_CUDNN(cudnnConvolutionForward(d_->cudnn(), &kOne, in_desc_.get(), in, filter_desc_.get(),
                                     ohwi_.data(), conv_desc_.get(), plan_.forward, ws,
                                     plan_.forward_bytes, &kZero, out_desc_.get(), y->data()));
    PS_CUDNN(cudnnAddTensor(d_->cudnn(), &kOne, bias_desc_.get(), b.data(), &kOne, out_desc_.get(),
                            y->data()));
    return OkStatus();
  }

  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override {
    PS_RETURN_IF_ERROR(CheckConv2DOperands(c_, x, w, nullptr, &dy));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "conv2d backward", {&x, &w, &dy}));
    PS_RETURN_IF_ERROR(Plan(x.shape()));
    PS_RETURN_IF_ERROR(FilterToOhwi(w));
    PS_ASSIGN_OR_RETURN(const float* in, Input(x));

    PS_RETURN_IF_ERROR(d_->Ensure(db, {c_.out_channels}));
    PS_CUDNN(cudnnConvolutionBackwardBias(d_->cudnn(), &kOne, out_desc_.get(), dy.data(), &kZero,
                                          bias_desc_.get(), db->data()));

    PS_RETURN_IF_ERROR(d_->Ensure(&grad_ohwi_, ohwi_.shape()));
    PS_ASSIGN_OR_RETURN(void* ws, d_->Workspace(plan_.filter_bytes));
    PS_CUDNN(cudnnConvolutionBackwardFilter(
        d_->cudnn(), &kOne, in_desc_.get(), in, out_desc_.get(), dy.data(), conv_desc_.get(),
        plan_.filter, ws, plan_.filter_bytes, &kZero, filter_desc_.get(), grad_ohwi_.data()));
    PS_RETURN_IF_ERROR(d_->Ensure(dw, w.shape()));
    PS_RETURN_IF_ERROR(
        Transpose2D(grad_ohwi_.data(), c_.out_channels, FilterRows(), dw->data(), d_->stream()));

    if (dx == nullptr) return OkStatus();
    Tensor* target = dx;
    if (plan_.explicit_padding) {
      PS_RETURN_IF_ERROR(d_->Ensure(&grad_padded_, padded_.shape()));
      target = &grad_padded_;
    } else {
      PS_RETURN_IF_ERROR(d_->Ensure(dx, x.shape()));
    }
    PS_ASSIGN_OR_RETURN(ws, d_->Workspace(plan_.data_bytes));
    PS_CUDNN(cudnnConvolutionBackwardData(d_->cudnn(), &kOne, filter_desc_.get(), ohwi_.data(),
                                          out_desc_.get(), dy.data(), conv_desc_.get(), plan_.data,
                                          ws, plan_.data_bytes, &kZero, in_desc_.get(),
                                          target->data()));
    if (!plan_.explicit_padding) return OkStatus();
    PS_RETURN_IF_ERROR(d_->Ensure(dx, x.shape()));
    const Shape& p = padded_.shape();
    return CropNhwc(grad_padded_.data(), p[0], p[1], p[2], p[3], plan_.h.pad_before,
                    plan_.w.pad_before, x.dim(1), x.dim(2), dx->data(), d_->stream());
  }

 private:
  // What an input shape needs, worked out on its first call.
  struct ShapePlan {
    Shape x;
    WindowDim h, w;
    bool explicit_padding = false;
    cudnnConvolutionFwdAlgo_t forward;
    cudnnConvolutionBwdDataAlgo_t data;
    cudnnConvolutionBwdFilterAlgo_t filter;
    size_t forward_bytes = 0, data_bytes = 0, filter_bytes = 0;
  };

  int64_t FilterRows() const { return c_.kernel_h * c_.kernel_w * c_.in_channels; }

  Status Plan(const Shape& x) {
    if (plan_.x == x) return OkStatus();
    ShapePlan p;
    p.x = x;
    p.h = ComputeWindow(x[1], c_.kernel_h, c_.stride, c_.padding);
    p.w = ComputeWindow(x[2], c_.kernel_w, c_.stride, c_.padding);
    p.explicit_padding = p.h.pad_before != p.h.pad_after || p.w.pad_before != p.w.pad_after;
    const int64_t pad_h = p.explicit_padding ? 0 : p.h.pad_before;
    const int64_t pad_w = p.explicit_padding ? 0 : p.w.pad_before;
    const int64_t in_h = p.explicit_padding ? x[1] + p.h.pad_before + p.h.pad_after : x[1];
    const int64_t in_w = p.explicit_padding ? x[2] + p.w.pad_before + p.w.pad_after : x[2];
    if (p.explicit_padding) {
      PS_RETURN_IF_ERROR(d_->Ensure(&padded_, {x[0], in_h, in_w, x[3]}));
    }
    PS_RETURN_IF_ERROR(SetNhwc(&in_desc_, x[0], in_h, in_w, x[3]));
    PS_RETURN_IF_ERROR(SetNhwc(&out_desc_, x[0], p.h.out, p.w.out, c_.out_channels));
    PS_RETURN_IF_ERROR(SetNhwc(&bias_desc_, 1, 1, 1, c_.out_channels));
    PS_ASSIGN_OR_RETURN(cudnnFilterDescriptor_t f, filter_desc_.Get());
    PS_CUDNN(cudnnSetFilter4dDescriptor(
        f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NHWC, static_cast<int>(c_.out_channels),
        static_cast<int>(c_.in_channels), static_cast<int>(c_.kernel_h),
        static_cast<int>(c_.kernel_w)));
    PS_ASSIGN_OR_RETURN(cudnnConvolutionDescriptor_t conv, conv_desc_.Get());
    PS_CUDNN(cudnnSetConvolution2dDescriptor(
        conv, static_cast<int>(pad_h), static_cast<int>(pad_w), static_cast<int>(c_.stride),
        static_cast<int>(c_.stride), 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    PS_CUDNN(cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH));
    PS_RETURN_IF_ERROR(ChooseAlgorithms(&p));
    plan_ = std::move(p);
    return OkStatus();
  }

  // The fastest algorithm of each direction by cuDNN's heuristics, and the
  // workspace it asks for.
  Status ChooseAlgorithms(ShapePlan* p) {
    cudnnHandle_t h = d_->cudnn();
    int found = 0;
    cudnnConvolutionFwdAlgoPerf_t fwd[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    PS_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, in_desc_.get(), filter_desc_.get(),
                                                    conv_desc_.get(), out_desc_.get(),
                                                    CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, fwd));
    PS_ASSIGN_OR_RETURN(int i, FirstUsable(fwd, found, "forward"));
    p->forward = fwd[i].algo;
    PS_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(h, in_desc_.get(), filter_desc_.get(),
                                                     conv_desc_.get(), out_desc_.get(), p->forward,
                                                     &p->forward_bytes));
    cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    PS_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        h, filter_desc_.get(), out_desc_.get(), conv_desc_.get(), in_desc_.get(),
        CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, data));
    PS_ASSIGN_OR_RETURN(i, FirstUsable(data, found, "backward data"));
    p->data = data[i].algo;
    PS_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, filter_desc_.get(), out_desc_.get(),
                                                          conv_desc_.get(), in_desc_.get(), p->data,
                                                          &p->data_bytes));
    cudnnConvolutionBwdFilterAlgoPerf_t filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    PS_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        h, in_desc_.get(), out_desc_.get(), conv_desc_.get(), filter_desc_.get(),
        CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, filter));
    PS_ASSIGN_OR_RETURN(i, FirstUsable(filter, found, "backward filter"));
    p->filter = filter[i].algo;
    PS_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, in_desc_.get(), out_desc_.get(),
                                                            conv_desc_.get(), filter_desc_.get(),
                                                            p->filter, &p->filter_bytes));
    return OkStatus();
  }

  template <typename Perf>
  static StatusOr<int> FirstUsable(const Perf* perf, int found, const char* direction) {
    for (int i = 0; i < found; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS) return i;
    }
    return Internal(std::string("cudnn: no convolution algorithm for the ") + direction + " pass");
  }

  Status FilterToOhwi(const Tensor& w) {
    PS_RETURN_IF_ERROR(
        d_->Ensure(&ohwi_, {c_.out_channels, c_.kernel_h, c_.kernel_w, c_.in_channels}));
    return Transpose2D(w.data(), FilterRows(), c_.out_channels, ohwi_.data(), d_->stream());
  }

  // The input as cuDNN reads it: x, or x padded explicitly.
  StatusOr<const float*> Input(const Tensor& x) {
    if (!plan_.explicit_padding) return x.data();
    PS_RETURN_IF_ERROR(PadNhwc(x.data(), x.dim(0), x.dim(1), x.dim(2), x.dim(3), plan_.h.pad_before,
                               plan_.h.pad_after, plan_.w.pad_before, plan_.w.pad_after, 0.0f,
                               padded_.data(), d_->stream()));
    return static_cast<const float*>(padded_.data());
  }

  CudaDevice* const d_;
  const Conv2DConfig c_;
  ShapePlan plan_;
  TensorDescriptor in_desc_, out_desc_, bias_desc_;
  FilterDescriptor filter_desc_;
  ConvolutionDescriptor conv_desc_;
  Tensor ohwi_, grad_ohwi_, padded_, grad_padded_;
};

}  // namespace

std::unique_ptr<AffineKernel> MakeConv2D(CudaDevice* device, const Conv2DConfig& config) {
  return std::make_unique<CudaConv2D>(device, config);
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
