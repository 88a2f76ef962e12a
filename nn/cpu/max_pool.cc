#include "nn/cpu/max_pool.h"

#include <glog/logging.h>

#include "nn/cpu/tensor_util.h"

namespace pstrain {
namespace nn {
namespace cpu {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

struct MaxPool::Plan {
  Shape y_shape;
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward bwd;
  memory src, dst, diff_dst, diff_src;  // caller's buffers, bound per call
  memory workspace;                     // argmax of the latest Forward
  bool has_forward = false;
};

MaxPool::MaxPool(DnnlContext* ctx, const PoolConfig& config) : ctx_(ctx), config_(config) {}
MaxPool::~MaxPool() = default;

Shape MaxPool::OutputShape(const Shape& x) const {
  WindowDim h = ComputeWindow(x[1], config_.window, config_.stride, config_.padding);
  WindowDim w = ComputeWindow(x[2], config_.window, config_.stride, config_.padding);
  return {x[0], h.out, w.out, x[3]};
}

Status MaxPool::CheckInput(const Shape& x) const {
  if (x.size() != 4) return InvalidArgument("max_pool: input " + ShapeString(x) + " is not NHWC");
  Shape y = OutputShape(x);
  if (y[1] <= 0 || y[2] <= 0) {
    return InvalidArgument("max_pool: input " + ShapeString(x) + " smaller than the window");
  }
  return OkStatus();
}

MaxPool::Plan* MaxPool::GetPlan(const Shape& x) {
  auto it = plans_.find(x);
  if (it != plans_.end()) return it->second.get();

  VLOG(1) << "max_pool: building primitives for input " << ShapeString(x);
  const dnnl::engine& eng = ctx_->engine;
  auto plan = std::make_unique<Plan>();
  plan->y_shape = OutputShape(x);
  const Shape& y = plan->y_shape;
  WindowDim wh = ComputeWindow(x[1], config_.window, config_.stride, config_.padding);
  WindowDim ww = ComputeWindow(x[2], config_.window, config_.stride, config_.padding);

  memory::desc src_md = PlainDesc({x[0], x[3], x[1], x[2]}, tag::nhwc);
  memory::desc dst_md = PlainDesc({y[0], y[3], y[1], y[2]}, tag::nhwc);
  memory::dims strides = {config_.stride, config_.stride};
  memory::dims kernel = {config_.window, config_.window};
  memory::dims pad_l = {wh.pad_before, ww.pad_before};
  memory::dims pad_r = {wh.pad_after, ww.pad_after};

  // oneDNN's max pooling skips padded cells, which is TF's -inf padding.
  auto algo = dnnl::algorithm::pooling_max;
  dnnl::pooling_forward::primitive_desc fwd_pd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_training, algo, src_md, dst_md, strides,
                                  kernel, pad_l, pad_r),
      eng);
  dnnl::pooling_backward::primitive_desc bwd_pd(
      dnnl::pooling_backward::desc(algo, src_md, dst_md, strides, kernel, pad_l, pad_r), eng,
      fwd_pd);
  plan->fwd = dnnl::pooling_forward(fwd_pd);
  plan->bwd = dnnl::pooling_backward(bwd_pd);
  plan->src = memory(src_md, eng, DNNL_MEMORY_NONE);
  plan->dst = memory(dst_md, eng, DNNL_MEMORY_NONE);
  plan->diff_src = memory(src_md, eng, DNNL_MEMORY_NONE);
  plan->diff_dst = memory(dst_md, eng, DNNL_MEMORY_NONE);
  plan->workspace = memory(fwd_pd.workspace_desc(), eng);

  Plan* raw = plan.get();
  plans_.emplace(x, std::move(plan));
  return raw;
}

Status MaxPool::Forward(const Tensor& x, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckInput(x.shape()));
  return CatchDnnl("max_pool forward", [&]() -> Status {
    Plan* p = GetPlan(x.shape());
    EnsureShape(y, p->y_shape);
    p->src.set_data_handle(const_cast<float*>(x.data()));
    p->dst.set_data_handle(y->data());
    p->fwd.execute(
        ctx_->stream,
        {{DNNL_ARG_SRC, p->src}, {DNNL_ARG_DST, p->dst}, {DNNL_ARG_WORKSPACE, p->workspace}});
    ctx_->stream.wait();
    p->has_forward = true;
    return OkStatus();
  });
}

Status MaxPool::Backward(const Shape& x_shape, const Tensor& dy, Tensor* dx) {
  PS_RETURN_IF_ERROR(CheckInput(x_shape));
  auto it = plans_.find(x_shape);
  if (it == plans_.end() || !it->second->has_forward) {
    return FailedPrecondition("max_pool: Backward before Forward on " + ShapeString(x_shape));
  }
  Plan* p = it->second.get();
  if (dy.shape() != p->y_shape) {
    return InvalidArgument("max_pool: output gradient " + ShapeString(dy.shape()) + ", want " +
                           ShapeString(p->y_shape));
  }
  return CatchDnnl("max_pool backward", [&]() -> Status {
    EnsureShape(dx, x_shape);
    p->diff_dst.set_data_handle(const_cast<float*>(dy.data()));
    p->diff_src.set_data_handle(dx->data());
    p->bwd.execute(ctx_->stream, {{DNNL_ARG_DIFF_DST, p->diff_dst},
                                  {DNNL_ARG_DIFF_SRC, p->diff_src},
                                  {DNNL_ARG_WORKSPACE, p->workspace}});
    ctx_->stream.wait();
    return OkStatus();
  });
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
