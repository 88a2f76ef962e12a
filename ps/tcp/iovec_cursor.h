// IovecCursor: what is left of a gathered write (an iovec array) as its
// bytes go out: the buffers from where the last send stopped.
#ifndef PSTRAIN_PS_TCP_IOVEC_CURSOR_H_
#define PSTRAIN_PS_TCP_IOVEC_CURSOR_H_

#include <sys/uio.h>

#include <cstddef>
#include <vector>

namespace pstrain {
namespace tcp {

// The bytes of `count` buffers.
inline size_t IovecBytes(const struct iovec* iov, int count) {
  size_t n = 0;
  for (int i = 0; i < count; ++i) n += iov[i].iov_len;
  return n;
}

class IovecCursor {
 public:
  IovecCursor(const struct iovec* iov, int count) : left_(iov, iov + count) {}

  struct iovec* data() {
    return left_.data() + first_;
  }
  int count() const { return static_cast<int>(left_.size() - first_); }
  bool empty() const { return first_ == left_.size(); }
  // The bytes left.
  size_t bytes() const { return IovecBytes(left_.data() + first_, count()); }
  // `n` more bytes went out (at most bytes()).
  void Advance(size_t n) {
    while (first_ < left_.size() && n >= left_[first_].iov_len) {
      n -= left_[first_].iov_len;
      ++first_;
    }
    if (n > 0) {
      left_[first_].iov_base = static_cast<char*>(left_[first_].iov_base) + n;
      left_[first_].iov_len -= n;
    }
  }

 private:
  std::vector<struct iovec> left_;
  size_t first_ = 0;
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_IOVEC_CURSOR_H_
