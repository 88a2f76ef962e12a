#include "ps/rpc/chunk_codec.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/testing/status_assertions.h"
#include "proto/ps.pb.h"
#include "ps/rpc/borrowed_slices.h"

namespace pstrain {
namespace {

Tensor Ramp(Shape shape) {
  Tensor t(std::move(shape));
  for (int64_t i = 0; i < t.size(); ++i) t[i] = 0.5f * static_cast<float>(i) - 3.0f;
  return t;
}

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  PS_EXPECT_OK(buffer.Dump(&slices));
  std::string out;
  for (const grpc::Slice& s : slices) {
    out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return out;
}

// The bytes as `pieces` slices of about equal size, as the transport may
// hand them over.
grpc::ByteBuffer Sliced(const std::string& bytes, size_t pieces) {
  std::vector<grpc::Slice> slices;
  const size_t step = bytes.size() / pieces + 1;
  for (size_t at = 0; at < bytes.size(); at += step) {
    slices.emplace_back(bytes.data() + at, std::min(step, bytes.size() - at));
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// Every chunk of `t` as Pull's reply messages, encoded and decoded again.
Tensor RoundTrip(const Tensor& t, uint32_t chunk_bytes, size_t pieces, int64_t* step) {
  std::vector<std::string> wire;
  {
    BorrowedSlices borrowed;
    proto::PullResponse rest;
    rest.set_global_step(77);
    ForEachChunkSpan(
        "w", t, chunk_bytes, [&](const proto::TensorChunk& head, const char* data, size_t n) {
          wire.push_back(Flatten(EncodeChunkMessage(rest, proto::PullResponse::kChunkFieldNumber,
                                                    head, borrowed.Borrow(data, n))));
          return true;
        });
  }
  TensorAssembler assembler;
  for (const std::string& bytes : wire) {
    grpc::ByteBuffer buffer = Sliced(bytes, pieces);
    proto::PullResponse rest;
    auto decoded =
        DecodeChunkMessage(&buffer, proto::PullResponse::kChunkFieldNumber, &rest, &assembler);
    EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(decoded.ok() && *decoded);
    *step = rest.global_step();
  }
  auto tensors = assembler.Finish();
  PS_EXPECT_OK(tensors);
  return std::move((*tensors)["w"]);
}

TEST(ChunkCodec, RoundTripsTensorsOfEverySizeInAnySlicing) {
  for (const Shape& shape : {Shape{0}, Shape{}, Shape{1}, Shape{3, 5}, Shape{1000, 3}}) {
    const Tensor t = Ramp(shape);
    for (uint32_t chunk_bytes : {4u, 36u, 1u << 20}) {
      for (size_t pieces : {1, 2, 7}) {
        int64_t step = 0;
        const Tensor back = RoundTrip(t, chunk_bytes, pieces, &step);
        EXPECT_EQ(step, 77);
        ASSERT_EQ(back.shape(), t.shape()) << ShapeString(shape);
        // An empty tensor has no memory to compare (memcmp of null is undefined).
        if (t.bytes() > 0) {
          EXPECT_EQ(std::memcmp(back.data(), t.data(), t.bytes()), 0) << ShapeString(shape);
        }
      }
    }
  }
}

// What EncodeChunkMessage writes is the message protobuf itself would write.
TEST(ChunkCodec, WritesPlainProtobuf) {
  const Tensor t = Ramp({4, 2});
  BorrowedSlices borrowed;
  proto::PushRequest rest;
  ForEachChunkSpan("b", t, 0, [&](const proto::TensorChunk& head, const char* data, size_t n) {
    const std::string bytes = Flatten(EncodeChunkMessage(
        rest, proto::PushRequest::kChunkFieldNumber, head, borrowed.Borrow(data, n)));
    proto::PushRequest parsed;
    EXPECT_TRUE(parsed.ParseFromString(bytes));
    proto::PushRequest expected;
    *expected.mutable_chunk() = head;
    expected.mutable_chunk()->set_data(data, n);
    EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
    return true;
  });
}

// A chunk whose data is not its last field (another writer's order) is read
// too, through a copy; the fields after the data still count.
TEST(ChunkCodec, ReadsChunksInAnyFieldOrder) {
  proto::TensorChunk first;                               // the data, then the rest of the head
  first.set_data("\x00\x00\x80\x3f\x00\x00\x00\x40", 8);  // 1.0f, 2.0f
  proto::TensorChunk head;
  head.set_name("v");
  head.mutable_meta()->set_dtype(proto::DT_FLOAT);
  head.mutable_meta()->add_shape(2);
  head.set_total_bytes(8);
  proto::PushRequest request;
  const std::string chunk_bytes = first.SerializeAsString() + head.SerializeAsString();
  std::string bytes;
  bytes.push_back(0x12);  // field 2 (chunk), length-delimited
  bytes.push_back(static_cast<char>(chunk_bytes.size()));
  bytes += chunk_bytes;
  grpc::ByteBuffer buffer = Sliced(bytes, 3);
  TensorAssembler assembler;
  auto decoded =
      DecodeChunkMessage(&buffer, proto::PushRequest::kChunkFieldNumber, &request, &assembler);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  auto tensors = assembler.Finish();
  PS_ASSERT_OK(tensors);
  EXPECT_EQ((*tensors)["v"][0], 1.0f);
  EXPECT_EQ((*tensors)["v"][1], 2.0f);
}

StatusOr<bool> DecodeBytes(const std::string& bytes, TensorAssembler* assembler) {
  grpc::ByteBuffer buffer = Sliced(bytes, 2);
  proto::PushRequest rest;
  return DecodeChunkMessage(&buffer, proto::PushRequest::kChunkFieldNumber, &rest, assembler);
}

// A push message of tensor v, shape [1], carrying `data`.
std::string PushOfOneFloat(const std::string& data) {
  proto::PushRequest request;
  request.mutable_chunk()->set_name("v");
  request.mutable_chunk()->mutable_meta()->set_dtype(proto::DT_FLOAT);
  request.mutable_chunk()->mutable_meta()->add_shape(1);
  request.mutable_chunk()->set_total_bytes(4);
  request.mutable_chunk()->set_data(data);
  return request.SerializeAsString();
}

TEST(ChunkCodec, RefusesWhatIsNotAMessage) {
  const std::string good = PushOfOneFloat("abcd");
  {
    TensorAssembler a;
    PS_EXPECT_OK(DecodeBytes(good, &a));
  }
  for (size_t cut = 1; cut < good.size(); ++cut) {
    TensorAssembler a;
    auto decoded = DecodeBytes(good.substr(0, cut), &a);
    SCOPED_TRACE(::testing::Message() << "cut at " << cut);
    PS_ASSERT_CODE(decoded, Code::kInvalidArgument);
    EXPECT_NE(decoded.status().message().find("not a valid pstrain.proto.PushRequest"),
              std::string::npos)
        << decoded.status().ToString();
  }
  TensorAssembler a;
  auto twice = DecodeBytes(good + good, &a);
  PS_ASSERT_CODE(twice, Code::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("two tensor chunks"), std::string::npos);
  TensorAssembler b;
  PS_EXPECT_CODE(DecodeBytes(std::string("\x00", 1) + good, &b), Code::kInvalidArgument);  // tag 0
}

// A chunk the assembler refuses is refused with the assembler's error.
TEST(ChunkCodec, PassesOnTheAssemblersRefusal) {
  TensorAssembler a;
  auto decoded = DecodeBytes(PushOfOneFloat("abcdefgh"), &a);
  PS_ASSERT_CODE(decoded, Code::kInvalidArgument);
  EXPECT_NE(decoded.status().message().find("runs past the end"), std::string::npos)
      << decoded.status().ToString();
}

// Without an assembler (before a stream's header) the chunk is only seen.
TEST(ChunkCodec, SkipsTheChunkWithoutAnAssembler) {
  auto decoded = DecodeBytes(PushOfOneFloat("abcd"), nullptr);
  PS_ASSERT_OK(decoded);
  EXPECT_TRUE(*decoded);
}

TEST(BorrowedSlices, WaitsUntilEverySliceIsReleased) {
  const std::string memory = "lent bytes";
  std::atomic<bool> released{false};
  std::thread holder;
  {
    BorrowedSlices borrowed;
    grpc::Slice slices[1] = {borrowed.Borrow(memory.data(), memory.size())};
    auto* buffer = new grpc::ByteBuffer(slices, 1);
    holder = std::thread([buffer, &released] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      released = true;
      delete buffer;
    });
    slices[0] = grpc::Slice();
  }
  EXPECT_TRUE(released.load());
  holder.join();
}

}  // namespace
}  // namespace pstrain
