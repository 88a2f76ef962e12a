// BorrowedSlices: gRPC slices that point into memory the caller owns, so a
// tensor goes onto the wire without being copied into a message first.
//
// gRPC may hold a slice after the Write that sent it returns (the transport
// frees it once the bytes are in the socket), so the memory must outlive
// every slice: the destructor waits until gRPC has let go of them all.
// Declare a BorrowedSlices after (inside the lifetime of) the memory it
// lends, and before the call's ClientContext: a call holds its slices until
// it is destroyed, so waiting while it lives would wait forever. A server
// handler, which cannot destroy its call, sends SharedTensorSlice instead.
// The connection's keepalive (grpc_options.h) bounds the wait for a
// transport stuck on a dead peer.
#ifndef PSTRAIN_PS_RPC_BORROWED_SLICES_H_
#define PSTRAIN_PS_RPC_BORROWED_SLICES_H_

#include <grpcpp/support/slice.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>

namespace pstrain {

class BorrowedSlices {
 public:
  BorrowedSlices() = default;
  BorrowedSlices(const BorrowedSlices&) = delete;
  BorrowedSlices& operator=(const BorrowedSlices&) = delete;
  // Waits until every slice has been released.
  ~BorrowedSlices();

  // A slice of [data, data + size); the memory must stay unchanged until
  // this object is destroyed.
  grpc::Slice Borrow(const char* data, size_t size);

 private:
  static void Release(void* self);

  std::mutex mu_;
  std::condition_variable released_;
  int outstanding_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_RPC_BORROWED_SLICES_H_
