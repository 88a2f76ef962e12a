// The ps's tensor channel (ps/tcp/): each input is the bytes a client sends
// on one connection, coming in pieces of 1 to 97 bytes, gathered and served
// by ServeTensorConnection as the ps's loop and threads serve a socket, to a
// ps that holds the fuzz model (ps_fuzz_model.h). Replies are touched and
// dropped.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz/ps_fuzz_model.h"
#include "ps/tcp/tensor_channel_service.h"

namespace pstrain {
namespace fuzz {
namespace {

// The input as the client's side of a connection.
class InputStream : public tcp::ByteStream {
 public:
  InputStream(const uint8_t* data, size_t size) : data_(data), left_(size) {}

  Status ReadFull(void* out, size_t n) override {
    if (n > left_) return Unavailable("end of input");
    Take(out, n);
    return OkStatus();
  }
  // What a socket has when its loop reads: a piece of the bytes sent.
  StatusOr<size_t> ReadSome(void* out, size_t n) override {
    if (left_ == 0) return Unavailable("end of input");
    n = std::min({n, left_, size_t{1} + pieces_++ % 97});
    Take(out, n);
    return n;
  }
  Status Write(const struct iovec* iov, int count) override {
    for (int i = 0; i < count; ++i) {
      // Touch every byte of the reply: ASan catches a reply from freed memory.
      const char* p = static_cast<const char*>(iov[i].iov_base);
      for (size_t k = 0; k < iov[i].iov_len; k += 4096) sink_ ^= p[k];
    }
    return OkStatus();
  }

 private:
  void Take(void* out, size_t n) {
    if (n > 0) std::memcpy(out, data_, n);
    data_ += n;
    left_ -= n;
  }

  const uint8_t* data_;
  size_t left_;
  size_t pieces_ = 0;
  volatile char sink_ = 0;
};

}  // namespace
}  // namespace fuzz
}  // namespace pstrain

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pstrain;
  fuzz::FuzzPs ps;
  fuzz::InputStream in(data, size);
  // A pull that would wait for a later step gives up at once.
  (void)tcp::ServeTensorConnection(&ps.core, &in, [] { return true; });
  return 0;
}
