#include "nn/cpu/conv2d.h"

#include <glog/logging.h>

#include "nn/conv2d_shapes.h"
#include "nn/cpu/operand.h"
#include "nn/cpu/tensor_util.h"

namespace pstrain {
namespace nn {
namespace cpu {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

// The primitives for one input shape, and the operands that bridge the
// caller's layouts to the ones oneDNN picked. Weights are format_tag::any:
// oneDNN's AVX-512 kernels want blocked weights, and reordering 5x5xCxK
// weights costs microseconds. Activations stay NHWC: letting oneDNN pick
// blocked activations (with reorders at the layer boundary) measured no
// faster for mnist (mnist_step_bench).
struct Conv2D::Plan {
  Shape y_shape;
  dnnl::convolution_forward fwd;
  dnnl::convolution_backward_data bwd_data;
  dnnl::convolution_backward_weights bwd_weights;
  Operand fwd_src, fwd_weights, fwd_dst;
  Operand bwd_data_diff_dst, bwd_data_weights, bwd_data_diff_src;
  Operand bwd_weights_src, bwd_weights_diff_dst, bwd_weights_diff_weights;
  memory bias;  // plain [cout] in every primitive
};

Conv2D::Conv2D(DnnlContext* ctx, const Conv2DConfig& config) : ctx_(ctx), config_(config) {}
Conv2D::~Conv2D() = default;

Shape Conv2D::OutputShape(const Shape& x) const { return Conv2DOutputShape(config_, x); }

Conv2D::Plan* Conv2D::GetPlan(const Shape& x) {
  auto it = plans_.find(x);
  if (it != plans_.end()) return it->second.get();

  VLOG(1) << "conv2d: building primitives for input " << ShapeString(x);
  const Conv2DConfig& c = config_;
  const dnnl::engine& eng = ctx_->engine;
  auto plan = std::make_unique<Plan>();
  plan->y_shape = OutputShape(x);
  const Shape& y = plan->y_shape;
  WindowDim wh = ComputeWindow(x[1], c.kernel_h, c.stride, c.padding);
  WindowDim ww = ComputeWindow(x[2], c.kernel_w, c.stride, c.padding);

  // oneDNN's logical dims are NCHW / OIHW whatever the physical layout.
  memory::dims src_dims = {x[0], x[3], x[1], x[2]};
  memory::dims dst_dims = {y[0], y[3], y[1], y[2]};
  memory::dims wei_dims = {c.out_channels, c.in_channels, c.kernel_h, c.kernel_w};
  memory::dims strides = {c.stride, c.stride};
  memory::dims pad_l = {wh.pad_before, ww.pad_before};
  memory::dims pad_r = {wh.pad_after, ww.pad_after};

  memory::desc user_src = PlainDesc(src_dims, tag::nhwc);
  memory::desc user_dst = PlainDesc(dst_dims, tag::nhwc);
  memory::desc user_wei = PlainDesc(wei_dims, tag::hwio);
  memory::desc bias_md = PlainDesc({c.out_channels}, tag::x);
  memory::desc any_wei = PlainDesc(wei_dims, tag::any);

  auto algo = dnnl::algorithm::convolution_direct;
  constexpr auto kIn = Operand::Direction::kInput;
  constexpr auto kOut = Operand::Direction::kOutput;
  dnnl::convolution_forward::primitive_desc fwd_pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, user_src, any_wei,
                                      bias_md, user_dst, strides, pad_l, pad_r),
      eng);
  dnnl::convolution_backward_data::primitive_desc bwd_data_pd(
      dnnl::convolution_backward_data::desc(algo, user_src, any_wei, user_dst, strides, pad_l,
                                            pad_r),
      eng, fwd_pd);
  dnnl::convolution_backward_weights::primitive_desc bwd_weights_pd(
      dnnl::convolution_backward_weights::desc(algo, user_src, any_wei, bias_md, user_dst, strides,
                                               pad_l, pad_r),
      eng, fwd_pd);

  plan->fwd = dnnl::convolution_forward(fwd_pd);
  plan->bwd_data = dnnl::convolution_backward_data(bwd_data_pd);
  plan->bwd_weights = dnnl::convolution_backward_weights(bwd_weights_pd);
  plan->fwd_src = Operand(kIn, user_src, fwd_pd.src_desc(), eng);
  plan->fwd_weights = Operand(kIn, user_wei, fwd_pd.weights_desc(), eng);
  plan->fwd_dst = Operand(kOut, user_dst, fwd_pd.dst_desc(), eng);
  plan->bwd_data_diff_dst = Operand(kIn, user_dst, bwd_data_pd.diff_dst_desc(), eng);
  plan->bwd_data_weights = Operand(kIn, user_wei, bwd_data_pd.weights_desc(), eng);
  plan->bwd_data_diff_src = Operand(kOut, user_src, bwd_data_pd.diff_src_desc(), eng);
  plan->bwd_weights_src = Operand(kIn, user_src, bwd_weights_pd.src_desc(), eng);
  plan->bwd_weights_diff_dst = Operand(kIn, user_dst, bwd_weights_pd.diff_dst_desc(), eng);
  plan->bwd_weights_diff_weights = Operand(kOut, user_wei, bwd_weights_pd.diff_weights_desc(), eng);
  plan->bias = memory(bias_md, eng, DNNL_MEMORY_NONE);

  Plan* raw = plan.get();
  plans_.emplace(x, std::move(plan));
  return raw;
}

Status Conv2D::Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckConv2DOperands(config_, x, w, &b, nullptr));
  return CatchDnnl("conv2d forward", [&]() -> Status {
    Plan* p = GetPlan(x.shape());
    EnsureShape(y, p->y_shape);
    dnnl::stream& s = ctx_->stream;
    p->bias.set_data_handle(const_cast<float*>(b.data()));
    p->fwd.execute(s, {{DNNL_ARG_SRC, p->fwd_src.In(x.data(), s)},
                       {DNNL_ARG_WEIGHTS, p->fwd_weights.In(w.data(), s)},
                       {DNNL_ARG_BIAS, p->bias},
                       {DNNL_ARG_DST, p->fwd_dst.Out(y->data())}});
    p->fwd_dst.Finish(s);
    s.wait();
    return OkStatus();
  });
}

Status Conv2D::Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                        Tensor* db) {
  PS_RETURN_IF_ERROR(CheckConv2DOperands(config_, x, w, nullptr, &dy));
  return CatchDnnl("conv2d backward", [&]() -> Status {
    Plan* p = GetPlan(x.shape());
    dnnl::stream& s = ctx_->stream;
    if (dx != nullptr) {
      EnsureShape(dx, x.shape());
      p->bwd_data.execute(s, {{DNNL_ARG_DIFF_DST, p->bwd_data_diff_dst.In(dy.data(), s)},
                              {DNNL_ARG_WEIGHTS, p->bwd_data_weights.In(w.data(), s)},
                              {DNNL_ARG_DIFF_SRC, p->bwd_data_diff_src.Out(dx->data())}});
      p->bwd_data_diff_src.Finish(s);
    }
    EnsureShape(dw, w.shape());
    EnsureShape(db, {config_.out_channels});
    p->bias.set_data_handle(db->data());
    p->bwd_weights.execute(s, {{DNNL_ARG_SRC, p->bwd_weights_src.In(x.data(), s)},
                               {DNNL_ARG_DIFF_DST, p->bwd_weights_diff_dst.In(dy.data(), s)},
                               {DNNL_ARG_DIFF_WEIGHTS, p->bwd_weights_diff_weights.Out(dw->data())},
                               {DNNL_ARG_DIFF_BIAS, p->bias}});
    p->bwd_weights_diff_weights.Finish(s);
    s.wait();
    return OkStatus();
  });
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
