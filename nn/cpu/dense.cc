#include "nn/cpu/dense.h"

#include <glog/logging.h>

#include <vector>

#include "nn/cpu/tensor_util.h"

namespace pstrain {
namespace nn {
namespace cpu {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

// Three matmuls over the caller's row-major buffers; the transposes are
// strided views (tag ba), not copies:
//   forward        y[N,out]  = x[N,in]     w[in,out] + b
//   backward data  dx[N,in]  = dy[N,out]   (w^T)[out,in]
//   backward wei.  dw[in,out] = (x^T)[in,N] dy[N,out]
struct Dense::Plan {
  dnnl::matmul fwd, bwd_data, bwd_weights;
  memory x, w, b, y;           // forward operands
  memory dy, w_t, dx;          // backward data
  memory x_t, dy_for_w, dw;    // backward weights
  std::vector<double> db_sum;  // scratch for the bias gradient
};

Dense::Dense(DnnlContext* ctx, int64_t in, int64_t out) : ctx_(ctx), in_(in), out_(out) {}
Dense::~Dense() = default;

Status Dense::CheckShapes(const Tensor& x, const Tensor& w) const {
  if (x.rank() < 1 || x.dim(0) == 0 || x.size() != x.dim(0) * in_) {
    return InvalidArgument("dense: input " + ShapeString(x.shape()) + " does not have " +
                           std::to_string(in_) + " elements per row");
  }
  if (w.shape() != Shape{in_, out_}) {
    return InvalidArgument("dense: weights " + ShapeString(w.shape()) + ", want " +
                           ShapeString({in_, out_}));
  }
  return OkStatus();
}

Dense::Plan* Dense::GetPlan(int64_t n) {
  auto it = plans_.find(n);
  if (it != plans_.end()) return it->second.get();

  VLOG(1) << "dense: building primitives for batch " << n;
  const dnnl::engine& eng = ctx_->engine;
  auto p = std::make_unique<Plan>();
  memory::desc x_md = PlainDesc({n, in_}, tag::ab);
  memory::desc w_md = PlainDesc({in_, out_}, tag::ab);
  memory::desc b_md = PlainDesc({1, out_}, tag::ab);
  memory::desc y_md = PlainDesc({n, out_}, tag::ab);
  memory::desc w_t_md = PlainDesc({out_, in_}, tag::ba);
  memory::desc x_t_md = PlainDesc({in_, n}, tag::ba);

  p->fwd =
      dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(x_md, w_md, b_md, y_md), eng));
  p->bwd_data =
      dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(y_md, w_t_md, x_md), eng));
  p->bwd_weights =
      dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(x_t_md, y_md, w_md), eng));
  auto none = [&](const memory::desc& md) { return memory(md, eng, DNNL_MEMORY_NONE); };
  p->x = none(x_md);
  p->w = none(w_md);
  p->b = none(b_md);
  p->y = none(y_md);
  p->dy = none(y_md);
  p->w_t = none(w_t_md);
  p->dx = none(x_md);
  p->x_t = none(x_t_md);
  p->dy_for_w = none(y_md);
  p->dw = none(w_md);

  Plan* raw = p.get();
  plans_.emplace(n, std::move(p));
  return raw;
}

Status Dense::Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) {
  PS_RETURN_IF_ERROR(CheckShapes(x, w));
  if (b.shape() != Shape{out_}) return InvalidArgument("dense: bias " + ShapeString(b.shape()));
  return CatchDnnl("dense forward", [&]() -> Status {
    Plan* p = GetPlan(x.dim(0));
    EnsureShape(y, {x.dim(0), out_});
    p->x.set_data_handle(const_cast<float*>(x.data()));
    p->w.set_data_handle(const_cast<float*>(w.data()));
    p->b.set_data_handle(const_cast<float*>(b.data()));
    p->y.set_data_handle(y->data());
    p->fwd.execute(ctx_->stream, {{DNNL_ARG_SRC, p->x},
                                  {DNNL_ARG_WEIGHTS, p->w},
                                  {DNNL_ARG_BIAS, p->b},
                                  {DNNL_ARG_DST, p->y}});
    ctx_->stream.wait();
    return OkStatus();
  });
}

Status Dense::Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                       Tensor* db) {
  PS_RETURN_IF_ERROR(CheckShapes(x, w));
  const int64_t n = x.dim(0);
  if (dy.shape() != Shape{n, out_}) {
    return InvalidArgument("dense: output gradient " + ShapeString(dy.shape()) + ", want " +
                           ShapeString({n, out_}));
  }
  return CatchDnnl("dense backward", [&]() -> Status {
    Plan* p = GetPlan(n);
    dnnl::stream& s = ctx_->stream;
    if (dx != nullptr) {
      EnsureShape(dx, x.shape());
      p->dy.set_data_handle(const_cast<float*>(dy.data()));
      p->w_t.set_data_handle(const_cast<float*>(w.data()));
      p->dx.set_data_handle(dx->data());
      p->bwd_data.execute(
          s, {{DNNL_ARG_SRC, p->dy}, {DNNL_ARG_WEIGHTS, p->w_t}, {DNNL_ARG_DST, p->dx}});
    }
    EnsureShape(dw, {in_, out_});
    p->x_t.set_data_handle(const_cast<float*>(x.data()));
    p->dy_for_w.set_data_handle(const_cast<float*>(dy.data()));
    p->dw.set_data_handle(dw->data());
    p->bwd_weights.execute(
        s, {{DNNL_ARG_SRC, p->x_t}, {DNNL_ARG_WEIGHTS, p->dy_for_w}, {DNNL_ARG_DST, p->dw}});

    // db = column sums of dy, accumulated in double.
    EnsureShape(db, {out_});
    std::vector<double>& sum = p->db_sum;
    sum.assign(out_, 0.0);
    for (int64_t i = 0; i < n; ++i) {
      const float* row = dy.data() + i * out_;
      for (int64_t j = 0; j < out_; ++j) sum[j] += row[j];
    }
    for (int64_t j = 0; j < out_; ++j) (*db)[j] = static_cast<float>(sum[j]);
    s.wait();
    return OkStatus();
  });
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
