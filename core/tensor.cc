#include "core/tensor.h"

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

namespace pstrain {
namespace {

float* AllocateFloats(int64_t n) {
  if (n == 0) return nullptr;
  size_t bytes = (static_cast<size_t>(n) * sizeof(float) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return static_cast<float*>(p);
}

}  // namespace

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

StatusOr<int64_t> CheckedNumElements(const Shape& shape) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / sizeof(float);
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return InvalidArgument("shape " + ShapeString(shape) + " has a negative dimension");
    if (d != 0 && n > kMax / d) {
      return InvalidArgument("shape " + ShapeString(shape) + " has too many elements");
    }
    n *= d;
  }
  return n;
}

std::string ShapeString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

void Tensor::Free::operator()(float* p) const {
  if (!owned || p == nullptr) return;
  if (memory != nullptr) {
    memory->Release(p);
  } else {
    std::free(p);
  }
}

std::unique_ptr<float, Tensor::Free> Tensor::AllocateLike(const Tensor& like, int64_t n) {
  DeviceMemory* memory = like.device();
  if (memory == nullptr) return std::unique_ptr<float, Free>(AllocateFloats(n), Free{true});
  if (n == 0) return std::unique_ptr<float, Free>(nullptr, Free{true, memory});
  float* p = memory->Allocate(static_cast<size_t>(n) * sizeof(float));
  if (p == nullptr) throw std::bad_alloc();
  return std::unique_ptr<float, Free>(p, Free{true, memory});
}

StatusOr<Tensor> Tensor::OnDevice(Shape shape, DeviceMemory* memory) {
  PS_ASSIGN_OR_RETURN(int64_t n, CheckedNumElements(shape));
  Tensor t;
  t.shape_ = std::move(shape);
  t.size_ = n;
  float* p = n == 0 ? nullptr : memory->Allocate(static_cast<size_t>(n) * sizeof(float));
  if (n > 0 && p == nullptr) {
    return ResourceExhausted("device memory: no room for a tensor of " + ShapeString(t.shape_) +
                             " (" + std::to_string(t.bytes()) + " bytes)");
  }
  t.data_ = std::unique_ptr<float, Free>(p, Free{true, memory});
  return t;
}

Tensor Tensor::View(Shape shape, float* data) { return View(std::move(shape), data, nullptr); }

Tensor Tensor::View(Shape shape, float* data, std::shared_ptr<const void> owner) {
  Tensor t;
  t.size_ = NumElements(shape);
  t.shape_ = std::move(shape);
  Free keep{false};
  keep.view_owner = std::move(owner);
  t.data_ = std::unique_ptr<float, Free>(data, std::move(keep));
  return t;
}

Tensor::Tensor(Shape shape)
    : shape_(std::move(shape)), size_(NumElements(shape_)), data_(AllocateFloats(size_)) {
  Fill(0.0f);
}

Tensor::Tensor(Shape shape, Uninitialized)
    : shape_(std::move(shape)), size_(NumElements(shape_)), data_(AllocateFloats(size_)) {}

Tensor::Tensor(Shape shape, const std::vector<float>& values) : Tensor(std::move(shape)) {
  assert(static_cast<int64_t>(values.size()) == size_);
  if (size_ > 0) std::memcpy(data(), values.data(), bytes());
}

void Tensor::CopyElementsFrom(const Tensor& other) {
  if (size_ == 0) return;
  if (device() != nullptr) {
    device()->CopyWithin(data(), other.data(), bytes());
  } else {
    std::memcpy(data(), other.data(), bytes());
  }
}

// A device tensor's copy is another on the same device.
Tensor::Tensor(const Tensor& other)
    : shape_(other.shape_), size_(other.size_), data_(AllocateLike(other, other.size_)) {
  CopyElementsFrom(other);
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    // A view gets memory of its own rather than writing through.
    if (size_ != other.size_ || !owns_data() || device() != other.device()) {
      data_ = AllocateLike(other, other.size_);
    }
    shape_ = other.shape_;
    size_ = other.size_;
    CopyElementsFrom(other);
  }
  return *this;
}

void Tensor::Fill(float value) {
  assert(device() == nullptr);
  float* p = data();
  for (int64_t i = 0; i < size_; ++i) p[i] = value;
}

void Tensor::Reshape(Shape shape) {
  assert(NumElements(shape) == size_);
  shape_ = std::move(shape);
}

}  // namespace pstrain
