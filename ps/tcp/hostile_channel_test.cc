// A live ps's tensor channel against clients that break its rules on
// purpose: each refusal names the problem, changes nothing, and leaves the
// ps serving.
#include <gtest/gtest.h>

#include <vector>

#include "core/bfloat16.h"
#include "core/testing/status_assertions.h"
#include "ps/tcp/raw_channel_test_util.h"

namespace pstrain {
namespace tcp {
namespace {

using HostileChannel = RawChannelTest;

// A chunk frame of w's elements [first, first + n): float32, or rounded to
// bfloat16 with its offsets counted in bfloat16s, as the client sends them.
void AddChunkOfW(FrameBatch* push, int64_t first, int64_t n, proto::DataType wire,
                 std::vector<uint16_t>* narrow, std::vector<float>* wide) {
  proto::TensorChunk head;
  head.set_name("w");
  head.mutable_meta()->set_dtype(wire);
  head.mutable_meta()->add_shape(1024);
  const int64_t width = wire == proto::DT_BFLOAT16 ? 2 : 4;
  head.set_offset(first * width);
  head.set_total_bytes(1024 * width);
  if (wire == proto::DT_BFLOAT16) {
    narrow->assign(n, FloatToBfloat16(1.0f));
    push->Add(FrameKind::kChunk, &head, reinterpret_cast<const char*>(narrow->data()), n * 2);
  } else {
    wide->assign(n, 1.0f);
    push->Add(FrameKind::kChunk, &head, reinterpret_cast<const char*>(wide->data()), n * 4);
  }
}

// A float32 chunk of a tensor followed by a bfloat16 one (or the other way)
// is refused on the dtype it travelled as, before anything is widened or
// applied.
TEST_F(HostileChannel, APushWhoseDtypeChangesMidTensorIsRefused) {
  for (const auto& [first, second] :
       {std::pair{proto::DT_FLOAT, proto::DT_BFLOAT16}, {proto::DT_BFLOAT16, proto::DT_FLOAT}}) {
    const proto::PushHeader header = PushOfW();
    FrameBatch push;
    push.Add(FrameKind::kPushHeader, &header);
    std::vector<uint16_t> narrow1, narrow2;
    std::vector<float> wide1, wide2;
    AddChunkOfW(&push, 0, 512, first, &narrow1, &wide1);
    AddChunkOfW(&push, 512, 512, second, &narrow2, &wide2);
    push.Add(FrameKind::kEnd, nullptr);
    ExpectRefused(SendPush(push), "after chunks sent as");
    // The ps closed the connection after its Error frame: a new one.
    ASSERT_NO_FATAL_FAILURE(UseTcp());
  }
  // One dtype throughout is applied: w = 3 - 1.
  const proto::PushHeader header = PushOfW();
  FrameBatch push;
  push.Add(FrameKind::kPushHeader, &header);
  std::vector<uint16_t> narrow1, narrow2;
  std::vector<float> wide1, wide2;
  AddChunkOfW(&push, 0, 512, proto::DT_BFLOAT16, &narrow1, &wide1);
  AddChunkOfW(&push, 512, 512, proto::DT_BFLOAT16, &narrow2, &wide2);
  push.Add(FrameKind::kEnd, nullptr);
  PS_ASSERT_OK(SendPush(push));
  std::map<std::string, Tensor> out;
  int64_t step = -1;
  PS_ASSERT_OK(ps_.client->Pull(7, {}, &out, &step));
  EXPECT_EQ(step, 1);
  EXPECT_EQ(out["w"][0], 2.0f);
  EXPECT_EQ(out["w"][1023], 2.0f);
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
