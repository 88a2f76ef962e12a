// Layers of several inputs without variables: add, concat, multiply, DLRM's
// dot interaction and a factorization machine's second-order term. They
// run on the CPU, element by element.
#include <algorithm>
#include <memory>
#include <numeric>

#include "nn/cpu/tensor_util.h"
#include "nn/layers/layers.h"
#include "nn/layers/merge_layer.h"

namespace pstrain {
namespace nn {
namespace {

// Each input's elements for one example.
std::vector<int64_t> ExampleSizes(const std::vector<const Tensor*>& xs) {
  std::vector<int64_t> sizes;
  for (const Tensor* x : xs) sizes.push_back(x->size() / std::max<int64_t>(x->dim(0), 1));
  return sizes;
}

// A layer of inputs of one shape, element by element, giving that shape.
class ElementwiseLayer : public MergeLayer {
 public:
  using MergeLayer::MergeLayer;
  StatusOr<Shape> GraphOutputShape(const std::vector<Shape>& in) override {
    for (const Shape& s : in) {
      if (s != in[0]) {
        return InvalidArgument("inputs of shapes " + ShapeString(in[0]) + " and " + ShapeString(s) +
                               " do not meet: they must be equal");
      }
    }
    return in[0];
  }
};

class AddLayer : public ElementwiseLayer {
 public:
  using ElementwiseLayer::ElementwiseLayer;
  Status GraphForward(Mode, const std::vector<const Tensor*>& xs, const Params&,
                      Tensor* y) override {
    cpu::EnsureShape(y, xs[0]->shape());
    float* out = y->data();
    const int64_t n = y->size();
    std::copy(xs[0]->data(), xs[0]->data() + n, out);
    for (size_t i = 1; i < xs.size(); ++i) {
      const float* in = xs[i]->data();
      for (int64_t j = 0; j < n; ++j) out[j] += in[j];
    }
    return OkStatus();
  }
  Status GraphBackward(const std::vector<const Tensor*>&, const Tensor&, const Params&,
                       const Tensor& dy, const std::vector<Tensor*>& dxs, const Grads&) override {
    for (Tensor* dx : dxs) {
      if (dx != nullptr) *dx = dy;
    }
    return OkStatus();
  }
};

class MultiplyLayer : public ElementwiseLayer {
 public:
  using ElementwiseLayer::ElementwiseLayer;
  Status GraphForward(Mode, const std::vector<const Tensor*>& xs, const Params&,
                      Tensor* y) override {
    cpu::EnsureShape(y, xs[0]->shape());
    Product(xs, xs.size(), y);
    return OkStatus();
  }
  // dx_i = dy times the product of the other inputs.
  Status GraphBackward(const std::vector<const Tensor*>& xs, const Tensor&, const Params&,
                       const Tensor& dy, const std::vector<Tensor*>& dxs, const Grads&) override {
    for (size_t i = 0; i < xs.size(); ++i) {
      if (dxs[i] == nullptr) continue;
      cpu::EnsureShape(dxs[i], dy.shape());
      Product(xs, i, dxs[i]);
      float* dx = dxs[i]->data();
      for (int64_t j = 0; j < dy.size(); ++j) dx[j] *= dy[j];
    }
    return OkStatus();
  }

 private:
  // The product of every input but `skip` (none skipped when out of range).
  static void Product(const std::vector<const Tensor*>& xs, size_t skip, Tensor* out) {
    out->Fill(1.0f);
    float* o = out->data();
    for (size_t i = 0; i < xs.size(); ++i) {
      if (i == skip) continue;
      const float* x = xs[i]->data();
      for (int64_t j = 0; j < out->size(); ++j) o[j] *= x[j];
    }
  }
};

// Along the last axis, the others equal; inputs of several ranks are
// concatenated when each is a vector ([w], [1, 1, w], ...): an embedding
// beside a dense layer's output.
class ConcatLayer : public MergeLayer {
 public:
  using MergeLayer::MergeLayer;
  StatusOr<Shape> GraphOutputShape(const std::vector<Shape>& in) override {
    const auto vector = [](const Shape& s) { return !s.empty() && NumElements(s) == s.back(); };
    out_ = in[0];
    if (out_.empty()) return InvalidArgument("a scalar input has no axis to concatenate along");
    const bool vectors = std::all_of(in.begin(), in.end(), vector);
    if (vectors) out_ = {0};
    out_.back() = 0;
    for (const Shape& s : in) {
      if (!vectors &&
          (s.size() != out_.size() || !std::equal(s.begin(), s.end() - 1, out_.begin()))) {
        return InvalidArgument("inputs of shapes " + ShapeString(in[0]) + " and " + ShapeString(s) +
                               " do not meet: all but the last axis must be equal");
      }
      out_.back() += s.back();
    }
    return out_;
  }
  Status GraphForward(Mode, const std::vector<const Tensor*>& xs, const Params&,
                      Tensor* y) override {
    Shape shape = {xs[0]->dim(0)};
    shape.insert(shape.end(), out_.begin(), out_.end());
    cpu::EnsureShape(y, shape);
    const int64_t width = out_.back(), rows = y->size() / width;
    int64_t at = 0;
    for (const Tensor* x : xs) {
      const int64_t w = x->shape().back();
      for (int64_t r = 0; r < rows; ++r) {
        std::copy(x->data() + r * w, x->data() + (r + 1) * w, y->data() + r * width + at);
      }
      at += w;
    }
    return OkStatus();
  }
  Status GraphBackward(const std::vector<const Tensor*>& xs, const Tensor&, const Params&,
                       const Tensor& dy, const std::vector<Tensor*>& dxs, const Grads&) override {
    const int64_t width = out_.back(), rows = dy.size() / width;
    int64_t at = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const int64_t w = xs[i]->shape().back();
      if (dxs[i] != nullptr) {
        cpu::EnsureShape(dxs[i], xs[i]->shape());
        for (int64_t r = 0; r < rows; ++r) {
          const float* from = dy.data() + r * width + at;
          std::copy(from, from + w, dxs[i]->data() + r * w);
        }
      }
      at += w;
    }
    return OkStatus();
  }

 private:
  Shape out_;  // one example's
};

// y = [x_0, dot(x_i, x_j) for i = 1..F-1, j = 0..i-1], as DLRM orders the
// lower triangle.
class DotInteractionLayer : public MergeLayer {
 public:
  using MergeLayer::MergeLayer;
  StatusOr<Shape> GraphOutputShape(const std::vector<Shape>& in) override {
    const int64_t d = NumElements(in[0]);
    for (const Shape& s : in) {
      if (NumElements(s) != d) {
        return InvalidArgument("inputs of shapes " + ShapeString(in[0]) + " and " + ShapeString(s) +
                               " do not meet: each must have as many values");
      }
    }
    const auto f = static_cast<int64_t>(in.size());
    return Shape{d + f * (f - 1) / 2};
  }
  Status GraphForward(Mode, const std::vector<const Tensor*>& xs, const Params&,
                      Tensor* y) override {
    const int64_t n = xs[0]->dim(0), d = ExampleSizes(xs)[0];
    const auto f = static_cast<int64_t>(xs.size());
    const int64_t width = d + f * (f - 1) / 2;
    cpu::EnsureShape(y, {n, width});
    for (int64_t e = 0; e < n; ++e) {
      float* out = y->data() + e * width;
      std::copy(xs[0]->data() + e * d, xs[0]->data() + (e + 1) * d, out);
      int64_t at = d;
      for (int64_t i = 1; i < f; ++i) {
        const float* xi = xs[i]->data() + e * d;
        for (int64_t j = 0; j < i; ++j) {
          const float* xj = xs[j]->data() + e * d;
          out[at++] = std::inner_product(xi, xi + d, xj, 0.0f);
        }
      }
    }
    return OkStatus();
  }
  Status GraphBackward(const std::vector<const Tensor*>& xs, const Tensor&, const Params&,
                       const Tensor& dy, const std::vector<Tensor*>& dxs, const Grads&) override {
    const int64_t n = xs[0]->dim(0), d = ExampleSizes(xs)[0];
    const auto f = static_cast<int64_t>(xs.size());
    const int64_t width = dy.dim(1);
    // Every input's gradient: into the caller's tensor, or for one not
    // wanted into a scratch tensor kept from step to step.
    unwanted_.resize(f);
    std::vector<Tensor*> all(f);
    for (int64_t i = 0; i < f; ++i) {
      all[i] = dxs[i] != nullptr ? dxs[i] : &unwanted_[i];
      cpu::EnsureShape(all[i], xs[i]->shape());
      all[i]->Fill(0.0f);
    }
    for (int64_t e = 0; e < n; ++e) {
      const float* g = dy.data() + e * width;
      float* d0 = all[0]->data() + e * d;
      for (int64_t k = 0; k < d; ++k) d0[k] += g[k];
      int64_t at = d;
      for (int64_t i = 1; i < f; ++i) {
        for (int64_t j = 0; j < i; ++j) {
          const float gp = g[at++];
          const float* xi = xs[i]->data() + e * d;
          const float* xj = xs[j]->data() + e * d;
          float* di = all[i]->data() + e * d;
          float* dj = all[j]->data() + e * d;
          for (int64_t k = 0; k < d; ++k) {
            di[k] += gp * xj[k];
            dj[k] += gp * xi[k];
          }
        }
      }
    }
    return OkStatus();
  }

 private:
  std::vector<Tensor> unwanted_;
};

// 0.5 * sum_k ((sum_f v_fk)^2 - sum_f v_fk^2) of the fields v_f, `dim`
// values each, read from the inputs in order.
class FmLayer : public MergeLayer {
 public:
  FmLayer(const std::string& name, int64_t dim) : MergeLayer(name), dim_(dim) {}
  int min_inputs() const override { return 1; }
  StatusOr<Shape> GraphOutputShape(const std::vector<Shape>& in) override {
    for (const Shape& s : in) {
      if (NumElements(s) % dim_ != 0) {
        return InvalidArgument("an input of shape " + ShapeString(s) +
                               " is not a whole number of fields of dim " + std::to_string(dim_));
      }
    }
    return Shape{1};
  }
  Status GraphForward(Mode, const std::vector<const Tensor*>& xs, const Params&,
                      Tensor* y) override {
    const int64_t n = xs[0]->dim(0);
    cpu::EnsureShape(y, {n, 1});
    cpu::EnsureShape(&sum_, {n, dim_});
    sum_.Fill(0.0f);
    const std::vector<int64_t> sizes = ExampleSizes(xs);
    for (int64_t e = 0; e < n; ++e) {
      float* s = sum_.data() + e * dim_;
      double squares = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const float* v = xs[i]->data() + e * sizes[i];
        for (int64_t at = 0; at < sizes[i]; ++at) {
          s[at % dim_] += v[at];
          squares += double{v[at]} * v[at];
        }
      }
      double total = 0;
      for (int64_t k = 0; k < dim_; ++k) total += double{s[k]} * s[k];
      (*y)[e] = static_cast<float>(0.5 * (total - squares));
    }
    return OkStatus();
  }
  // d/dv_fk = dy * (s_k - v_fk), s_k the forward's sum over the fields.
  Status GraphBackward(const std::vector<const Tensor*>& xs, const Tensor&, const Params&,
                       const Tensor& dy, const std::vector<Tensor*>& dxs, const Grads&) override {
    const int64_t n = xs[0]->dim(0);
    const std::vector<int64_t> sizes = ExampleSizes(xs);
    for (size_t i = 0; i < xs.size(); ++i) {
      if (dxs[i] == nullptr) continue;
      cpu::EnsureShape(dxs[i], xs[i]->shape());
      for (int64_t e = 0; e < n; ++e) {
        const float* v = xs[i]->data() + e * sizes[i];
        const float* s = sum_.data() + e * dim_;
        float* dv = dxs[i]->data() + e * sizes[i];
        for (int64_t at = 0; at < sizes[i]; ++at) dv[at] = dy[e] * (s[at % dim_] - v[at]);
      }
    }
    return OkStatus();
  }

 private:
  const int64_t dim_;
  Tensor sum_;  // [N, dim]: each example's sum over its fields
};

}  // namespace

StatusOr<std::unique_ptr<Layer>> CreateMergeLayer(const proto::LayerSpec& spec,
                                                  const LayerContext& context) {
  if (context.backend->memory() != nullptr) {
    return InvalidArgument("runs on the CPU only, not on " + context.backend->Describe());
  }
  const std::string& name = spec.name();
  switch (spec.kind_case()) {
    case proto::LayerSpec::kAdd:
      return std::unique_ptr<Layer>(std::make_unique<AddLayer>(name));
    case proto::LayerSpec::kMultiply:
      return std::unique_ptr<Layer>(std::make_unique<MultiplyLayer>(name));
    case proto::LayerSpec::kConcat:
      return std::unique_ptr<Layer>(std::make_unique<ConcatLayer>(name));
    case proto::LayerSpec::kDotInteraction:
      return std::unique_ptr<Layer>(std::make_unique<DotInteractionLayer>(name));
    case proto::LayerSpec::kFm:
      if (spec.fm().dim() <= 0) return InvalidArgument("dim must be > 0");
      return std::unique_ptr<Layer>(std::make_unique<FmLayer>(name, spec.fm().dim()));
    case proto::LayerSpec::kCross:
      return CreateCrossLayer(name, spec.cross(), context);
    default:
      return InvalidArgument("not a layer of several inputs");
  }
}

}  // namespace nn
}  // namespace pstrain
