// A dense layer on cuBLAS. cuBLAS is column-major: a row-major [rows, cols]
// matrix is its cols x rows, so y = x w (row-major) is y' = w' x' there.
#include <cublas_v2.h>

#include <string>

#include "nn/cuda/cuda_kernels.h"
#include "nn/cuda/cuda_status.h"
#include "nn/cuda/cudnn_descriptors.h"
#include "nn/cuda/elementwise_kernels.h"

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

class CudaDense : public AffineKernel {
 public:
  CudaDense(CudaDevice* device, int64_t in, int64_t out) : d_(device), in_(in), out_(out) {}

  Status Forward(const Tensor& x, const Tensor& w, const Tensor& b, Tensor* y) override {
    PS_RETURN_IF_ERROR(Check(x, w, &b, nullptr));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "dense forward", {&x, &w, &b}));
    const int64_t n = x.dim(0);
    PS_RETURN_IF_ERROR(d_->Ensure(y, {n, out_}));
    // y' (out x n) = w' (out x in) x' (in x n).
    PS_CUBLAS(d_->blas().Sgemm(d_->cublas(), CUBLAS_OP_N, CUBLAS_OP_N, Int(out_), Int(n), Int(in_),
                               &kOne, w.data(), Int(out_), x.data(), Int(in_), &kZero, y->data(),
                               Int(out_)));
    return BiasAdd(y->data(), b.data(), n, out_, d_->stream());
  }

  Status Backward(const Tensor& x, const Tensor& w, const Tensor& dy, Tensor* dx, Tensor* dw,
                  Tensor* db) override {
    PS_RETURN_IF_ERROR(Check(x, w, nullptr, &dy));
    PS_RETURN_IF_ERROR(CheckOnDevice(d_, "dense backward", {&x, &w, &dy}));
    const int64_t n = x.dim(0);
    if (dx != nullptr) {
      // dx' (in x n) = (w')^T dy' (out x n).
      PS_RETURN_IF_ERROR(d_->Ensure(dx, x.shape()));
      PS_CUBLAS(d_->blas().Sgemm(d_->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, Int(in_), Int(n),
                                 Int(out_), &kOne, w.data(), Int(out_), dy.data(), Int(out_),
                                 &kZero, dx->data(), Int(in_)));
    }
    // dw' (out x in) = dy' (out x n) (x')^T.
    PS_RETURN_IF_ERROR(d_->Ensure(dw, {in_, out_}));
    PS_CUBLAS(d_->blas().Sgemm(d_->cublas(), CUBLAS_OP_N, CUBLAS_OP_T, Int(out_), Int(in_), Int(n),
                               &kOne, dy.data(), Int(out_), x.data(), Int(in_), &kZero, dw->data(),
                               Int(out_)));
    // db = dy' (out x n) times a column of ones.
    PS_RETURN_IF_ERROR(d_->Ensure(db, {out_}));
    PS_ASSIGN_OR_RETURN(const float* ones, d_->Ones(n));
    PS_CUBLAS(d_->blas().Sgemv(d_->cublas(), CUBLAS_OP_N, Int(out_), Int(n), &kOne, dy.data(),
                               Int(out_), ones, 1, &kZero, db->data(), 1));
    return OkStatus();
  }

 private:
  static int Int(int64_t v) { return static_cast<int>(v); }

  Status Check(const Tensor& x, const Tensor& w, const Tensor* b, const Tensor* dy) const {
    const int64_t n = x.rank() > 0 ? x.dim(0) : 0;
    if (n == 0 || x.size() != n * in_) {
      return InvalidArgument("dense: input " + ShapeString(x.shape()) + " is not N x " +
                             std::to_string(in_));
    }
    if (w.shape() != Shape{in_, out_}) {
      return InvalidArgument("dense: weights " + ShapeString(w.shape()) + ", want [" +
                             std::to_string(in_) + "," + std::to_string(out_) + "]");
    }
    if (b != nullptr && b->shape() != Shape{out_}) {
      return InvalidArgument("dense: biases " + ShapeString(b->shape()));
    }
    if (dy != nullptr && dy->shape() != Shape{n, out_}) {
      return InvalidArgument("dense: gradient " + ShapeString(dy->shape()));
    }
    if (n * (in_ + out_) > (int64_t{1} << 31)) {
      return InvalidArgument("dense: a batch of " + std::to_string(n) + " is too large for cuBLAS");
    }
    return OkStatus();
  }

  CudaDevice* const d_;
  const int64_t in_, out_;
};

}  // namespace

std::unique_ptr<AffineKernel> MakeDense(CudaDevice* device, int64_t in, int64_t out) {
  return std::make_unique<CudaDense>(device, in, out);
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
