// Tensor: a dense, row-major float32 array with a shape, in host memory or,
// when a device backend made it, in a device's (core/device_memory.h).
//
// Storage is 64-byte aligned so vector kernels (oneDNN, AVX-512) run at full
// speed. A Tensor owns its buffer; copying copies the data. Not thread-safe:
// callers synchronize access to a shared Tensor.
#ifndef PSTRAIN_CORE_TENSOR_H_
#define PSTRAIN_CORE_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device_memory.h"
#include "core/status.h"

namespace pstrain {

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar shape {}). The shape must be
// valid (CheckedNumElements says so); shapes from outside are checked first.
int64_t NumElements(const Shape& shape);
// NumElements of a shape from outside (a request, a file): InvalidArgument
// for a negative dimension, or when the element count or its float32 byte
// count does not fit in 63 bits.
StatusOr<int64_t> CheckedNumElements(const Shape& shape);
// "[5,5,1,32]"
std::string ShapeString(const Shape& shape);

class Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor of the given shape.
  explicit Tensor(Shape shape);
  // A tensor whose contents the caller overwrites before reading.
  enum Uninitialized { kUninitialized };
  Tensor(Shape shape, Uninitialized);
  Tensor(Shape shape, const std::vector<float>& values);

  // A tensor over `data`, which it does not own: the caller keeps that
  // memory alive and in place while the view lives. Copies of a view, and
  // a view assigned to, own their memory. For sending and receiving a
  // slice of a bigger tensor without copying it (ps/client/shard_rows.h).
  static Tensor View(Shape shape, float* data);
  // As View, and keeps `owner` (what holds that memory: a mapping) alive
  // as long as the view lives.
  static Tensor View(Shape shape, float* data, std::shared_ptr<const void> owner);
  bool owns_data() const { return data_.get_deleter().owned; }
  // A view without an owner: valid only while the memory it views is.
  bool borrows_data() const { return !owns_data() && data_.get_deleter().view_owner == nullptr; }

  // An uninitialized tensor in `memory`, a device's; ResourceExhausted when
  // the device has no room for it. Copies of it are made on that device.
  static StatusOr<Tensor> OnDevice(Shape shape, DeviceMemory* memory);
  // Where data() points: nullptr for host memory, else the device's memory.
  DeviceMemory* device() const { return data_.get_deleter().memory; }

  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&& other) noexcept = default;
  Tensor& operator=(Tensor&& other) noexcept = default;

  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return size_; }
  size_t bytes() const { return static_cast<size_t>(size_) * sizeof(float); }

  float* data() { return data_.get(); }
  const float* data() const { return data_.get(); }
  float& operator[](int64_t i) { return data_.get()[i]; }
  float operator[](int64_t i) const { return data_.get()[i]; }

  // Host tensors only.
  void Fill(float value);
  // Changes the shape; the element count must not change.
  void Reshape(Shape shape);

 private:
  struct Free {
    Free() : owned(true), memory(nullptr) {}
    explicit Free(bool owns, DeviceMemory* device = nullptr) : owned(owns), memory(device) {}
    void operator()(float* p) const;
    bool owned;                              // false: a View's, which frees nothing
    DeviceMemory* memory;                    // set: a device's, given back to it
    std::shared_ptr<const void> view_owner;  // a View's memory's holder, if any
  };
  // Memory for `n` floats where `like` keeps its own (the host or its device).
  static std::unique_ptr<float, Free> AllocateLike(const Tensor& like, int64_t n);
  // other's elements into this tensor's memory, which holds as many in the
  // same place (the host or one device).
  void CopyElementsFrom(const Tensor& other);
  Shape shape_;
  int64_t size_ = 0;
  std::unique_ptr<float, Free> data_;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TENSOR_H_
