#include "ps/tensor_chunks.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <vector>

namespace pstrain {
namespace {

std::vector<proto::TensorChunk> Split(const std::string& name, const Tensor& t, uint32_t bytes) {
  std::vector<proto::TensorChunk> chunks;
  proto::TensorChunk chunk;
  ForEachChunk(name, t, bytes, &chunk, [&] {
    chunks.push_back(chunk);
    return true;
  });
  return chunks;
}

Tensor Iota(Shape shape) {
  Tensor t(std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(i) * 0.5f;
  return t;
}

TEST(TensorChunks, RoundTripInManyChunks) {
  Tensor t = Iota({10, 7});  // 280 bytes
  auto chunks = Split("w", t, 64);
  EXPECT_EQ(chunks.size(), 5u);  // 64*4 + 24
  TensorAssembler a;
  for (const auto& c : chunks) ASSERT_TRUE(a.Add(c).ok());
  auto out = a.Finish();
  PS_ASSERT_OK(out);
  const Tensor& back = out->at("w");
  EXPECT_EQ(back.shape(), t.shape());
  for (int64_t i = 0; i < t.size(); ++i) ASSERT_EQ(back[i], t[i]);
}

TEST(TensorChunks, EmptyAndScalarTensorsTravel) {
  TensorAssembler a;
  for (const auto& c : Split("empty", Tensor({0, 3}), 64)) ASSERT_TRUE(a.Add(c).ok());
  for (const auto& c : Split("scalar", Tensor(Shape{}), 64)) ASSERT_TRUE(a.Add(c).ok());
  auto out = a.Finish();
  PS_ASSERT_OK(out);
  EXPECT_EQ(out->at("empty").size(), 0);
  EXPECT_EQ(out->at("scalar").size(), 1);
}

TEST(TensorChunks, RejectsMalformedStreams) {
  Tensor t = Iota({8});
  auto chunks = Split("v", t, 8);  // 4 chunks of 8 bytes
  ASSERT_EQ(chunks.size(), 4u);
  {
    TensorAssembler a;  // a gap
    PS_ASSERT_OK(a.Add(chunks[0]));
    Status s = a.Add(chunks[2]);
    EXPECT_EQ(s.code(), Code::kInvalidArgument);
    EXPECT_NE(s.message().find("expected 8"), std::string::npos) << s.message();
  }
  {
    TensorAssembler a;  // missing tail
    PS_ASSERT_OK(a.Add(chunks[0]));
    auto out = a.Finish();
    EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
    EXPECT_NE(out.status().message().find("incomplete"), std::string::npos);
  }
  {
    TensorAssembler a;  // size disagrees with shape
    proto::TensorChunk c = chunks[0];
    c.set_total_bytes(12);
    EXPECT_EQ(a.Add(c).code(), Code::kInvalidArgument);
  }
  {
    TensorAssembler a;  // data past the end
    proto::TensorChunk c = chunks[3];
    PS_ASSERT_OK(a.Add(chunks[0]));
    PS_ASSERT_OK(a.Add(chunks[1]));
    PS_ASSERT_OK(a.Add(chunks[2]));
    c.set_data(std::string(16, 'x'));
    EXPECT_EQ(a.Add(c).code(), Code::kInvalidArgument);
  }
  {
    TensorAssembler a;  // wrong dtype
    proto::TensorChunk c = chunks[0];
    c.mutable_meta()->set_dtype(proto::DT_INT64);
    EXPECT_EQ(a.Add(c).code(), Code::kInvalidArgument);
  }
}

// The Init that crashed a ps: dimensions of 2^32 each, whose byte count
// wraps to 0, so that total_bytes 0 matched.
TEST(TensorChunks, RefusesShapesWhoseSizeOverflows) {
  TensorAssembler a;
  proto::TensorChunk c;
  c.set_name("w");
  c.mutable_meta()->set_dtype(proto::DT_FLOAT);
  for (int i = 0; i < 2; ++i) c.mutable_meta()->add_shape(int64_t{1} << 32);
  c.set_total_bytes(0);
  Status s = a.Add(c);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("too many elements"), std::string::npos) << s.message();
  c.mutable_meta()->set_shape(1, -4);
  EXPECT_EQ(a.Add(c).code(), Code::kInvalidArgument);
  EXPECT_EQ(a.Finish()->size(), 0u) << "nothing was kept";
}

TEST(TensorChunks, RefusesWhatPassesTheByteLimitBeforeAllocating) {
  TensorAssembler a(TensorAssembler::Limits{1000, {}});
  auto small = Split("a", Iota({100}), 4096);  // 400 bytes + bookkeeping
  PS_ASSERT_OK(a.Add(small[0]));
  auto big = Split("b", Iota({120}), 4096);  // 480 more: past 1000
  Status s = a.Add(big[0]);
  EXPECT_EQ(s.code(), Code::kResourceExhausted);
  EXPECT_NE(s.message().find("tensor b [120]"), std::string::npos) << s.message();
  // Many empty tensors cost their bookkeeping: the limit holds for them too.
  TensorAssembler b(TensorAssembler::Limits{1000, {}});
  Status last;
  for (int i = 0; i < 100 && last.ok(); ++i)
    last = b.Add(Split("e" + std::to_string(i), Tensor({0}), 64)[0]);
  EXPECT_EQ(last.code(), Code::kResourceExhausted);
}

TEST(TensorChunks, CheckSeesEachTensorFirst) {
  std::vector<std::string> seen;
  TensorAssembler a(TensorAssembler::Limits{
      UINT64_MAX, [&](const std::string& name, const Shape& shape) {
        seen.push_back(name + ShapeString(shape));
        return name == "known" ? OkStatus() : NotFound("no variable " + name);
      }});
  for (const auto& c : Split("known", Iota({4}), 8)) ASSERT_TRUE(a.Add(c).ok());
  EXPECT_EQ(a.Add(Split("other", Iota({4}), 8)[0]).code(), Code::kNotFound);
  EXPECT_EQ(seen, (std::vector<std::string>{"known[4]", "other[4]"})) << "once per tensor";
}

// A tensor's chunks travel as one dtype from the first to the last: one
// widened from bfloat16 after float32 ones (or the other way) is refused
// before it is placed.
TEST(TensorChunks, RefusesAChunkThatTravelledAsAnotherDtype) {
  Tensor t = Iota({32});
  auto chunks = Split("w", t, 64);
  ASSERT_EQ(chunks.size(), 2u);
  TensorAssembler a;
  PS_ASSERT_OK(a.Place(chunks[0], 64, proto::DT_FLOAT));
  const Status s = a.Place(chunks[1], 64, proto::DT_BFLOAT16).status();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("DT_BFLOAT16 after chunks sent as DT_FLOAT"), std::string::npos)
      << s.ToString();
  TensorAssembler b;
  PS_ASSERT_OK(b.Place(chunks[0], 64, proto::DT_BFLOAT16));
  EXPECT_EQ(b.Place(chunks[1], 64).status().code(), Code::kInvalidArgument);
  TensorAssembler same;
  PS_ASSERT_OK(same.Place(chunks[0], 64, proto::DT_BFLOAT16));
  PS_EXPECT_OK(same.Place(chunks[1], 64, proto::DT_BFLOAT16));
}

TEST(TensorChunks, RefusesATensorSentTwice) {
  TensorAssembler a;
  auto chunks = Split("v", Iota({2}), 64);
  PS_ASSERT_OK(a.Add(chunks[0]));
  Status s = a.Add(chunks[0]);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("sent again"), std::string::npos) << s.message();
}

// A view offered for reuse is filled in place; one whose tensor does not
// come is dropped, so what the map holds afterwards is what arrived.
TEST(TensorChunks, FillsViewsInPlaceAndDropsTheOnesNotSent) {
  Tensor whole({4});
  std::map<std::string, Tensor> buffers;
  buffers["sent"] = Tensor::View({2}, whole.data());
  buffers["not sent"] = Tensor::View({2}, whole.data() + 2);
  TensorAssembler assembler;
  assembler.Reuse(&buffers);
  Tensor values(Shape{2}, {5.0f, 6.0f});
  proto::TensorChunk chunk;
  ForEachChunk("sent", values, 1 << 20, &chunk, [&] { return assembler.Add(chunk).ok(); });
  PS_ASSERT_OK(assembler.FinishInto(&buffers));
  EXPECT_EQ(whole[0], 5.0f);
  EXPECT_EQ(whole[1], 6.0f);
  ASSERT_EQ(buffers.count("sent"), 1u);
  EXPECT_EQ(buffers["sent"].data(), whole.data());
  EXPECT_EQ(buffers.count("not sent"), 0u);
}

// A chunk already in memory (shared memory) becomes a view of it, copied
// nowhere; only a whole tensor may, never one begun by a copied chunk.
TEST(TensorChunks, PlacesAWholeTensorInMemoryAsAViewOfIt) {
  Tensor in_memory = Iota({3, 2});
  proto::TensorChunk head = Split("w", in_memory, 1 << 20)[0];
  head.clear_data();
  TensorAssembler a;
  PS_ASSERT_OK(a.PlaceView(head, in_memory.bytes(), in_memory.data()));
  auto out = a.Finish();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& w = out->at("w");
  EXPECT_FALSE(w.owns_data());
  EXPECT_EQ(w.data(), in_memory.data());
  EXPECT_EQ(w.shape(), in_memory.shape());

  TensorAssembler partial;
  Status s = partial.PlaceView(head, in_memory.bytes() - 4, in_memory.data());
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("whole tensor"), std::string::npos) << s.message();

  TensorAssembler begun;
  auto chunks = Split("w", in_memory, 8);
  PS_ASSERT_OK(begun.Add(chunks[0]));
  proto::TensorChunk rest = chunks[1];
  rest.clear_data();
  s = begun.PlaceView(rest, in_memory.bytes() - 8, in_memory.data() + 2);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
}

}  // namespace
}  // namespace pstrain
