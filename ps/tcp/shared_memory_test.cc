// The tensor channel's shared memory (ps/tcp/shared_region.h): regions
// shared between two mappings, and a live ps refusing every ShmAttach and
// ShmChunk that does not hold together, changing nothing.
#include <gtest/gtest.h>

#include <cstring>

#include "ps/rpc/loopback_ps.h"
#include "ps/tcp/shared_region.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {
namespace {

// Skips a test on a machine without POSIX shared memory (no /dev/shm).
#define SKIP_WITHOUT_SHARED_MEMORY()                                  \
  if (!SharedRegion::Create(4096).ok()) {                             \
    GTEST_SKIP() << "no POSIX shared memory (/dev/shm) on this machine"; \
  }

TEST(SharedRegion, TwoMappingsOfARegionShareItsBytes) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto created = SharedRegion::Create(1 << 16);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto opened = SharedRegion::Open((*created)->name(), 1 << 16);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::memcpy((*created)->data() + 100, "pstrain", 7);
  EXPECT_EQ(std::memcmp((*opened)->data() + 100, "pstrain", 7), 0);
  EXPECT_TRUE((*opened)->Holds(0, 1 << 16));
  EXPECT_FALSE((*opened)->Holds(1, 1 << 16));
  EXPECT_FALSE((*opened)->Holds(UINT64_MAX, 2));  // no overflow
  // Once the creator unlinks the name, nobody else can open it.
  const std::string name = (*created)->name();
  (*created)->Unlink();
  EXPECT_EQ(SharedRegion::Open(name, 1 << 16).status().code(), Code::kNotFound);
}

TEST(SharedRegion, OpenRefusesOtherNamesAndWrongSizes) {
  SKIP_WITHOUT_SHARED_MEMORY();
  EXPECT_EQ(SharedRegion::Open("/dev-shm-other", 4096).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SharedRegion::Open("/pstrain-shm-../x", 4096).status().code(),
            Code::kInvalidArgument);
  auto created = SharedRegion::Create(4096);
  ASSERT_TRUE(created.ok());
  EXPECT_EQ(SharedRegion::Open((*created)->name(), 8192).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(SharedRegion::Open((*created)->name(), SharedRegion::kMaxBytes + 1).status().code(),
            Code::kInvalidArgument);
}

// A raw connection to a live ps's tensor channel holding one variable.
class HostileSharedMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ps_.Start().ok());
    proto::InitHeader header;
    header.set_placement_fingerprint(7);
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(1.0f);
    header.add_variables("w");
    header.set_holds_global_step(true);
    Tensor w({1024});
    w.Fill(3.0f);
    ASSERT_TRUE(ps_.client->Init(header, {{"w", &w}}).ok());
    auto socket = Socket::Connect("127.0.0.1", ps_.server->tensor_port(), std::chrono::seconds(5));
    ASSERT_TRUE(socket.ok()) << socket.status().ToString();
    socket_ = std::move(socket).value();
    socket_->SetTimeout(std::chrono::seconds(5));
  }

  // A push of w's gradient as one ShmChunk frame naming `offset`.
  Status PushShmChunk(uint64_t offset) {
    proto::PushHeader header;
    header.set_placement_fingerprint(7);
    header.set_increment_global_step(true);
    header.set_num_tensors(1);
    proto::ShmChunk chunk;
    chunk.mutable_head()->set_name("w");
    chunk.mutable_head()->mutable_meta()->set_dtype(proto::DT_FLOAT);
    chunk.mutable_head()->mutable_meta()->add_shape(1024);
    chunk.mutable_head()->set_total_bytes(4096);
    chunk.set_region_offset(offset);
    chunk.set_bytes(4096);
    FrameBatch push;
    push.Add(FrameKind::kPushHeader, &header);
    push.Add(FrameKind::kShmChunk, &chunk);
    push.Add(FrameKind::kEnd, nullptr);
    PS_RETURN_IF_ERROR(push.WriteTo(socket_.get()));
    PS_ASSIGN_OR_RETURN(Frame reply, ReadFrame(socket_.get()));
    if (reply.kind != FrameKind::kError) return OkStatus();
    return ErrorOf(reply);
  }

  // Offers `region` to the ps, which maps it.
  void Attach(const SharedRegion& region) {
    proto::ShmAttach attach;
    attach.set_name(region.name());
    attach.set_bytes(region.bytes());
    ASSERT_TRUE(WriteFrame(socket_.get(), FrameKind::kShmAttach, &attach).ok());
    auto reply = ReadFrame(socket_.get());
    ASSERT_TRUE(reply.ok());
    proto::ShmAttachReply attached;
    ASSERT_TRUE(ParseMeta(*reply, &attached).ok());
    ASSERT_TRUE(attached.attached()) << attached.why();
  }

  // w on the ps, and global_step: untouched by every refused request.
  void ExpectUnchanged() {
    std::map<std::string, Tensor> out;
    int64_t step = -1;
    ASSERT_TRUE(ps_.client->Pull(7, {}, &out, &step).ok());
    EXPECT_EQ(step, 0);
    for (int64_t i = 0; i < 1024; ++i) ASSERT_EQ(out["w"][i], 3.0f) << i;
  }

  LoopbackPs ps_;
  std::unique_ptr<Socket> socket_;
};

TEST_F(HostileSharedMemory, AShmChunkWithoutARegionIsRefused) {
  const Status s = PushShmChunk(0);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("without a shared region"), std::string::npos) << s.ToString();
  ExpectUnchanged();
}

TEST_F(HostileSharedMemory, AShmChunkOutsideTheRegionIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  ASSERT_TRUE(region.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const Status s = PushShmChunk(8192 - 4095);  // one byte past the end
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("outside the shared region"), std::string::npos) << s.ToString();
  ExpectUnchanged();
}

// The ps applies a push straight from the region, as floats: bytes that do
// not start on a float's boundary are refused, not read misaligned.
TEST_F(HostileSharedMemory, AShmChunkOffAFloatsBoundaryIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  ASSERT_TRUE(region.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const Status s = PushShmChunk(2);
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
  EXPECT_NE(s.message().find("is not a float's"), std::string::npos) << s.ToString();
  ExpectUnchanged();
}

TEST_F(HostileSharedMemory, AnAttachOfSomethingElseIsRefusedAndTheConnectionGoesOn) {
  for (const char* name : {"/etc/passwd", "/pstrain-shm-no-such-region"}) {
    proto::ShmAttach attach;
    attach.set_name(name);
    attach.set_bytes(4096);
    ASSERT_TRUE(WriteFrame(socket_.get(), FrameKind::kShmAttach, &attach).ok());
    auto reply = ReadFrame(socket_.get());
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    ASSERT_EQ(reply->kind, FrameKind::kShmAttachReply);
    proto::ShmAttachReply refused;
    ASSERT_TRUE(ParseMeta(*reply, &refused).ok());
    EXPECT_FALSE(refused.attached()) << name;
    EXPECT_FALSE(refused.why().empty());
  }
  // The same connection still serves a pull.
  proto::PullRequest pull;
  pull.set_placement_fingerprint(7);
  ASSERT_TRUE(WriteFrame(socket_.get(), FrameKind::kPullRequest, &pull).ok());
  auto first = ReadFrame(socket_.get());
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->kind, FrameKind::kPullReply);
  ExpectUnchanged();
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
