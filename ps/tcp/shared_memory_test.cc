// The tensor channel's shared memory (ps/tcp/shared_region.h,
// shared_arena.h): regions shared between two mappings, a task's arena and
// the ps writing pulls into it and reading pushes from it, and a live ps
// refusing every ShmAttach and ShmChunk that does not hold together,
// changing nothing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "ps/rpc/loopback_ps.h"
#include "ps/tcp/shared_arena.h"
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

bool NameExists(const std::string& name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

// Tensors in the arena: aligned, apart, alive on their own; a full arena
// hands out ordinary tensors, and room given back is handed out again.
TEST(SharedArena, HandsOutAlignedRoomAndTakesItBack) {
  SKIP_WITHOUT_SHARED_MEMORY();
  const uint64_t each = SharedArena::BytesFor({100});
  EXPECT_EQ(each, 448u);  // 400 bytes, to 64
  auto arena = SharedArena::Create(2 * each);
  ASSERT_TRUE(arena.ok()) << arena.status().ToString();
  const char* base = (*arena)->region()->data();
  Tensor a = (*arena)->Allocate({100});
  Tensor b = (*arena)->Allocate({10, 10});
  for (const Tensor* t : {&a, &b}) {
    EXPECT_FALSE(t->owns_data());
    EXPECT_FALSE(t->borrows_data());  // it keeps its memory alive
    const char* p = reinterpret_cast<const char*>(t->data());
    EXPECT_TRUE(p >= base && p + t->bytes() <= base + 2 * each);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  }
  EXPECT_NE(a.data(), b.data());
  Tensor full = (*arena)->Allocate({100});
  EXPECT_TRUE(full.owns_data());
  float* room = a.data();
  a = Tensor();  // gives its room back
  Tensor again = (*arena)->Allocate({100});
  EXPECT_EQ(again.data(), room);
}

// The arena's name stays for later connections while a tensor of it lives
// (even once the arena itself is dropped), and goes with the last one.
TEST(SharedArena, LivesWhileItsTensorsDo) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto arena = SharedArena::Create(1 << 16);
  ASSERT_TRUE(arena.ok());
  const std::string name = (*arena)->region()->name();
  Tensor t = (*arena)->Allocate({16});
  arena->reset();
  EXPECT_TRUE(NameExists(name));
  auto opened = SharedRegion::Open(name, 1 << 16);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  t.Fill(7.0f);  // still mapped
  EXPECT_EQ(std::memcmp((*opened)->data(), t.data(), t.bytes()), 0);
  t = Tensor();
  EXPECT_FALSE(NameExists(name));
}

// The arena a crashed task left in /dev/shm goes; a live task's stays, and
// so does a region on its way to the ps (its name goes once mapped).
TEST(SharedArena, RemovesTheArenasOfTasksThatAreGone) {
  SKIP_WITHOUT_SHARED_MEMORY();
  const std::string prefix = SharedRegion::kNamePrefix;
  const std::string dead_arena = prefix + SharedRegion::kArenaTag + "999999999-0-1";
  const std::string dead_region = prefix + "999999999-0-2";
  for (const std::string& name : {dead_arena, dead_region}) {
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0) << name;
    close(fd);
  }
  auto live = SharedArena::Create(4096);  // this process's
  ASSERT_TRUE(live.ok());
  EXPECT_FALSE(NameExists(dead_arena));  // Create swept it
  EXPECT_TRUE(NameExists(dead_region));
  EXPECT_TRUE(NameExists((*live)->region()->name()));
  shm_unlink(dead_region.c_str());
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

  // A push of w's gradient as one ShmChunk frame naming `offset` in the
  // region, or in the arena.
  Status PushShmChunk(uint64_t offset, bool in_arena = false) {
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
    chunk.set_in_arena(in_arena);
    FrameBatch push;
    push.Add(FrameKind::kPushHeader, &header);
    push.Add(FrameKind::kShmChunk, &chunk);
    push.Add(FrameKind::kEnd, nullptr);
    PS_RETURN_IF_ERROR(push.WriteTo(socket_.get()));
    PS_ASSIGN_OR_RETURN(Frame reply, ReadFrame(socket_.get()));
    if (reply.kind != FrameKind::kError) return OkStatus();
    return ErrorOf(reply);
  }

  // Offers `region` to the ps as the connection's region or arena; the ps
  // maps it.
  void Attach(const SharedRegion& region, bool arena = false) {
    proto::ShmAttach attach;
    attach.set_name(region.name());
    attach.set_bytes(region.bytes());
    const FrameKind kind = arena ? FrameKind::kShmAttachArena : FrameKind::kShmAttach;
    ASSERT_TRUE(WriteFrame(socket_.get(), kind, &attach).ok());
    auto reply = ReadFrame(socket_.get());
    ASSERT_TRUE(reply.ok());
    proto::ShmAttachReply attached;
    ASSERT_TRUE(ParseMeta(*reply, &attached).ok());
    ASSERT_TRUE(attached.attached()) << attached.why();
  }

  // A refusal naming `why`, which changed nothing.
  void ExpectRefused(const Status& s, const std::string& why) {
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(why), std::string::npos) << s.ToString();
    ExpectUnchanged();
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
  ExpectRefused(s, "without a shared region");
}

TEST_F(HostileSharedMemory, AShmChunkOutsideTheRegionIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  ASSERT_TRUE(region.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const Status s = PushShmChunk(8192 - 4095);  // one byte past the end
  ExpectRefused(s, "outside the shared region");
}

// The ps applies a push straight from the region, as floats: bytes that do
// not start on a float's boundary are refused, not read misaligned.
TEST_F(HostileSharedMemory, AShmChunkOffAFloatsBoundaryIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  ASSERT_TRUE(region.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const Status s = PushShmChunk(2);
  ExpectRefused(s, "is not a float's");
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

TEST_F(HostileSharedMemory, AShmChunkInAnArenaNeverOfferedIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  ASSERT_TRUE(region.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(**region));  // a region, but no arena
  const Status s = PushShmChunk(0, /*in_arena=*/true);
  ExpectRefused(s, "without an arena");
}

TEST_F(HostileSharedMemory, AShmChunkOutsideTheArenaIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto arena = SharedArena::Create(8192);
  ASSERT_TRUE(arena.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(*(*arena)->region(), /*arena=*/true));
  const Status s = PushShmChunk(8192 - 4092, /*in_arena=*/true);
  ExpectRefused(s, "outside the arena");
}

// The whole exchange through the arena: a push read where the gradient
// lies, a pull written straight to the room asked for (and nowhere else),
// and a room past the arena's end or of another size than the variable
// answered through the socket instead.
TEST_F(HostileSharedMemory, AnArenaCarriesPushesFromAndPullsIntoWhereTheTensorsLie) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto arena = SharedArena::Create(3 * 4096);
  ASSERT_TRUE(arena.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(*(*arena)->region(), /*arena=*/true));
  char* base = (*arena)->region()->data();
  float* grad = reinterpret_cast<float*>(base);
  for (int i = 0; i < 1024; ++i) grad[i] = 1.0f;
  ASSERT_TRUE(PushShmChunk(0, /*in_arena=*/true).ok());  // w: 3 - 1 = 2

  const std::vector<std::pair<uint64_t, uint64_t>> rooms = {
      {4096, 4096}, {3 * 4096 - 4092, 4096}, {4096, 4092}};
  for (const auto& [at, bytes] : rooms) {
    std::memset(base + 4096, 0, 2 * 4096);
    proto::PullRequest pull;
    pull.set_placement_fingerprint(7);
    (*pull.mutable_arena_rooms())["w"].set_offset(at);
    (*pull.mutable_arena_rooms())["w"].set_bytes(bytes);
    ASSERT_TRUE(WriteFrame(socket_.get(), FrameKind::kPullRequest, &pull).ok());
    auto head = ReadFrame(socket_.get());
    ASSERT_TRUE(head.ok());
    ASSERT_EQ(head->kind, FrameKind::kPullReply);
    auto chunk = ReadFrame(socket_.get());
    ASSERT_TRUE(chunk.ok());
    const bool fits = at == 4096 && bytes == 4096;
    if (fits) {
      ASSERT_EQ(chunk->kind, FrameKind::kShmChunk);
      proto::ShmChunk shm;
      ASSERT_TRUE(ParseMeta(*chunk, &shm).ok());
      EXPECT_TRUE(shm.in_arena());
      EXPECT_EQ(shm.region_offset(), at);
      const float* values = reinterpret_cast<const float*>(base + at);
      for (int i = 0; i < 1024; ++i) ASSERT_EQ(values[i], 2.0f) << i;
      EXPECT_EQ(grad[0], 1.0f);  // nothing else written
    } else {
      ASSERT_EQ(chunk->kind, FrameKind::kChunk);  // on the socket
      std::vector<char> data(chunk->data_bytes);
      ASSERT_TRUE(socket_->ReadFull(data.data(), data.size()).ok());
      for (char* p = base + 4096; p < base + 3 * 4096; ++p) ASSERT_EQ(*p, 0);
    }
    auto end = ReadFrame(socket_.get());
    ASSERT_TRUE(end.ok());
    EXPECT_EQ(end->kind, FrameKind::kEnd);
  }
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
