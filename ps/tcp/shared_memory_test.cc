// The tensor channel's shared memory (ps/tcp/shared_region.h,
// shared_arena.h): sealed regions shared between two mappings, a task's
// arena and the ps writing pulls into it and reading pushes from it, and a
// live ps refusing every offer of memory that could shrink under it and
// every ShmChunk that does not hold together, changing nothing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/unique_fd.h"
#include "ps/tcp/raw_channel_test_util.h"
#include "ps/tcp/shared_arena.h"
#include "ps/tcp/shared_region.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"

namespace pstrain {
namespace tcp {
namespace {

// Skips a test on a machine without memory files (memfd_create).
#define SKIP_WITHOUT_SHARED_MEMORY()                           \
  if (!SharedRegion::Create(4096).ok()) {                      \
    GTEST_SKIP() << "no memory files (memfd) on this machine"; \
  }

TEST(SharedRegion, TwoMappingsOfARegionShareItsBytes) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto created = SharedRegion::Create(1 << 16);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  auto adopted = SharedRegion::Adopt(UniqueFd(dup((*created)->fd())), 1 << 16, "region");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  std::memcpy((*created)->data() + 100, "pstrain", 7);
  EXPECT_EQ(std::memcmp((*adopted)->data() + 100, "pstrain", 7), 0);
  EXPECT_TRUE((*adopted)->Holds(0, 1 << 16));
  EXPECT_FALSE((*adopted)->Holds(1, 1 << 16));
  EXPECT_FALSE((*adopted)->Holds(UINT64_MAX, 2));  // no overflow
  EXPECT_EQ((*adopted)->fd(), -1);                 // the mapping is all the ps keeps
}

// What the ps maps can never become shorter, not even by its creator: the
// region a task makes is sealed.
TEST(SharedRegion, ARegionCannotBeShrunkOrGrownByAnyone) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto created = SharedRegion::Create(1 << 16);
  PS_ASSERT_OK(created);
  EXPECT_NE(ftruncate((*created)->fd(), 0), 0);
  EXPECT_EQ(errno, EPERM);
  EXPECT_NE(ftruncate((*created)->fd(), 4096), 0);
  EXPECT_NE(ftruncate((*created)->fd(), 1 << 20), 0);
  struct stat st;
  ASSERT_EQ(fstat((*created)->fd(), &st), 0);
  EXPECT_EQ(st.st_size, 1 << 16);
}

// The ps maps nothing whose size another process could still cut: an
// unsealed memory file, one sealed only against growing, a file on disk, a
// pipe; nor more bytes than a region holds, or more than kMaxBytes.
TEST(SharedRegion, AdoptRefusesWhatCouldShrinkOrIsTooSmall) {
  SKIP_WITHOUT_SHARED_MEMORY();
  const auto refused = [](int fd, uint64_t bytes, const std::string& why) {
    const Status s = SharedRegion::Adopt(UniqueFd(fd), bytes, "the offer").status();
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
    EXPECT_NE(s.message().find(why), std::string::npos) << s.ToString();
  };
  const int unsealed = memfd_create("test", MFD_CLOEXEC);
  ASSERT_EQ(ftruncate(unsealed, 4096), 0);
  refused(unsealed, 4096, "the offer is not a memory file sealed against shrinking");
  const int grow_only = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(ftruncate(grow_only, 4096), 0);
  ASSERT_EQ(fcntl(grow_only, F_ADD_SEALS, F_SEAL_GROW), 0);
  refused(grow_only, 4096, "not a memory file sealed");
  char path[] = "/tmp/pstrain-region-XXXXXX";
  const int file = mkstemp(path);
  ASSERT_GE(file, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(file, 4096), 0);
  refused(file, 4096, "not a memory file sealed");
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  close(pipe_fds[1]);
  refused(pipe_fds[0], 4096, "not a memory file sealed");
  // Sealed, but its pages not reserved: what the ps wrote there would be
  // charged to the ps.
  const int sparse = memfd_create("test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_EQ(ftruncate(sparse, 4096), 0);
  ASSERT_EQ(fcntl(sparse, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  refused(sparse, 4096, "has 0 of the 4096 bytes offered in memory");
  auto region = SharedRegion::Create(4096);
  PS_ASSERT_OK(region);
  refused(dup((*region)->fd()), 8192, "holds 4096 bytes, fewer than the 8192 offered");
  refused(dup((*region)->fd()), 0, "of 0 bytes");
  refused(dup((*region)->fd()), SharedRegion::kMaxBytes + 1, "at most");
}

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

// The arena stays (mapped, its descriptor open for later connections)
// while a tensor of it lives, even once the arena itself is dropped, and
// goes with the last one.
TEST(SharedArena, LivesWhileItsTensorsDo) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto arena = SharedArena::Create(1 << 16);
  PS_ASSERT_OK(arena);
  std::weak_ptr<SharedArena> watch = *arena;
  Tensor t = (*arena)->Allocate({16});
  auto adopted = SharedRegion::Adopt(UniqueFd(dup((*arena)->region()->fd())), 1 << 16, "arena");
  ASSERT_TRUE(adopted.ok()) << adopted.status().ToString();
  arena->reset();
  EXPECT_FALSE(watch.expired());
  t.Fill(7.0f);  // still mapped
  EXPECT_EQ(std::memcmp((*adopted)->data(), t.data(), t.bytes()), 0);
  t = Tensor();
  EXPECT_TRUE(watch.expired());
}

// Shared memory travels on the ps's local socket: the fixture's raw
// connection is one.
class HostileSharedMemory : public RawChannelTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(RawChannelTest::SetUp());
    ASSERT_NO_FATAL_FAILURE(UseLocalSocket());
  }
};

TEST_F(HostileSharedMemory, AShmChunkWithoutARegionIsRefused) {
  const Status s = PushShmChunk(0);
  ExpectRefused(s, "without a shared region");
}

TEST_F(HostileSharedMemory, AShmChunkOutsideTheRegionIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  PS_ASSERT_OK(region);
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const Status s = PushShmChunk(8192 - 4095);  // one byte past the end
  ExpectRefused(s, "outside the shared region");
}

// The ps applies a push straight from the region, as floats: bytes that do
// not start on a float's boundary are refused, not read misaligned.
TEST_F(HostileSharedMemory, AShmChunkOffAFloatsBoundaryIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  PS_ASSERT_OK(region);
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const Status s = PushShmChunk(2);
  ExpectRefused(s, "is not a float's");
}

// An offer without a descriptor, of a file on disk, of a memory file
// anyone could still shrink, or over TCP, is refused with the reason, and
// the connection serves on.
TEST_F(HostileSharedMemory, AnOfferOfAnythingButASealedRegionIsRefusedAndTheConnectionGoesOn) {
  SKIP_WITHOUT_SHARED_MEMORY();
  const UniqueFd passwd(open("/etc/passwd", O_RDONLY | O_CLOEXEC));
  ASSERT_TRUE(passwd.valid());
  const UniqueFd unsealed(memfd_create("hostile", MFD_CLOEXEC));
  ASSERT_EQ(ftruncate(unsealed.get(), 4096), 0);
  const std::vector<std::pair<int, std::string>> offers = {
      {-1, "no descriptor came with the offer"},
      {passwd.get(), "not a memory file sealed against shrinking"},
      {unsealed.get(), "not a memory file sealed against shrinking"}};
  for (const auto& [fd, why] : offers) {
    for (const bool arena : {false, true}) {
      const proto::ShmAttachReply reply = Offer(fd, 4096, arena);
      EXPECT_FALSE(reply.attached());
      EXPECT_NE(reply.why().find(why), std::string::npos) << reply.why();
    }
  }
  // The same connection still serves a pull.
  proto::PullRequest pull;
  pull.set_placement_fingerprint(7);
  PS_ASSERT_OK(WriteFrame(socket_.get(), FrameKind::kPullRequest, &pull));
  auto first = ReadFrame(socket_.get());
  PS_ASSERT_OK(first);
  EXPECT_EQ(first->kind, FrameKind::kPullReply);
  // Over TCP no descriptor can come: a ps never maps shared memory there.
  ASSERT_NO_FATAL_FAILURE(UseTcp());
  const proto::ShmAttachReply reply = Offer(-1, 4096);
  EXPECT_FALSE(reply.attached());
  EXPECT_NE(reply.why().find("only on the ps's local socket"), std::string::npos) << reply.why();
  ExpectUnchanged();
}

// A descriptor belongs to the request it came with: one sent beside a pull
// (which takes none) is not taken for the next offer's, which came without
// one and is refused as such.
TEST_F(HostileSharedMemory, ADescriptorThatCameWithAnEarlierRequestIsNotAnOffersOwn) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  proto::PullRequest pull;
  pull.set_placement_fingerprint(7);
  FrameBatch frame;
  frame.Add(FrameKind::kPullRequest, &pull);
  const Status sent = frame.WriteTo(socket_.get(), (*region)->fd());
  ASSERT_TRUE(sent.ok()) << sent.ToString();
  for (FrameKind kind = FrameKind::kPullReply; kind != FrameKind::kEnd;) {  // the reply, whole
    auto answer = ReadFrame(socket_.get());
    ASSERT_TRUE(answer.ok()) << answer.status().ToString();
    ASSERT_NE(answer->kind, FrameKind::kError) << ErrorOf(*answer).ToString();
    std::string data(answer->data_bytes, '\0');
    const Status read = socket_->ReadFull(data.data(), data.size());
    ASSERT_TRUE(read.ok()) << read.ToString();
    kind = answer->kind;
  }
  for (const bool arena : {false, true}) {
    const proto::ShmAttachReply reply = Offer(-1, (*region)->bytes(), arena);
    EXPECT_FALSE(reply.attached()) << "the pull's descriptor was mapped as the offer's";
    EXPECT_NE(reply.why().find("no descriptor came with the offer"), std::string::npos)
        << reply.why();
  }
  ExpectUnchanged();
}

// The five ways a process on the host used to kill a ps with SIGBUS: get
// it to map memory, then cut the memory short, then make the ps touch it (a
// push from the region, from the region's tail or from the arena, a pull
// into the region or into the arena). Memory that can be cut short is
// never mapped; whatever the attacker does next is refused, or answered
// over the socket; the ps lives on, w and its step unchanged.
TEST_F(HostileSharedMemory, MemoryCutShortUnderThePsCannotFaultIt) {
  SKIP_WITHOUT_SHARED_MEMORY();
  for (const bool arena : {false, true}) {
    for (const uint64_t cut_to : {uint64_t{0}, uint64_t{4096}}) {
      const UniqueFd memory(memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING));
      ASSERT_EQ(ftruncate(memory.get(), 1 << 16), 0);
      const proto::ShmAttachReply reply = Offer(memory.get(), 1 << 16, arena);
      ASSERT_FALSE(reply.attached()) << "arena " << arena;
      ASSERT_EQ(ftruncate(memory.get(), static_cast<off_t>(cut_to)), 0);
      // A push of a tensor in the region (at its tail too) or the arena.
      for (const uint64_t offset : {uint64_t{0}, uint64_t{(1 << 16) - 4096}}) {
        ExpectRefused(PushShmChunk(offset, arena),
                      arena ? "without an arena" : "without a shared region");
        ASSERT_NO_FATAL_FAILURE(UseLocalSocket());  // the ps closed that one
      }
      // A pull into the region or into a room of the arena: on the socket.
      proto::PullRequest pull;
      pull.set_placement_fingerprint(7);
      pull.set_reply_in_shared_memory(!arena);
      if (arena) {
        (*pull.mutable_arena_rooms())["w"].set_offset(0);
        (*pull.mutable_arena_rooms())["w"].set_bytes(4096);
      }
      PS_ASSERT_OK(WriteFrame(socket_.get(), FrameKind::kPullRequest, &pull));
      auto head = ReadFrame(socket_.get());
      ASSERT_TRUE(head.ok()) << head.status().ToString();
      ASSERT_EQ(head->kind, FrameKind::kPullReply);
      auto chunk = ReadFrame(socket_.get());
      PS_ASSERT_OK(chunk);
      ASSERT_EQ(chunk->kind, FrameKind::kChunk);
      std::vector<char> data(chunk->data_bytes);
      PS_ASSERT_OK(socket_->ReadFull(data.data(), data.size()));
      auto end = ReadFrame(socket_.get());
      PS_ASSERT_OK(end);
      EXPECT_EQ(end->kind, FrameKind::kEnd);
      ExpectUnchanged();
    }
  }
}

// All connections together map no more than the ps's budget: past it an
// offer is refused, and a connection that goes gives its share back.
class SharedMemoryBudgetTest : public HostileSharedMemory {
 protected:
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    limits.max_shared_bytes = 96 << 10;
    return limits;
  }
};

TEST_F(SharedMemoryBudgetTest, OffersPastTheBudgetAreRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(64 << 10);
  auto arena = SharedRegion::Create(64 << 10);
  ASSERT_TRUE(region.ok() && arena.ok());
  ASSERT_NO_FATAL_FAILURE(Attach(**region));
  const proto::ShmAttachReply refused = Offer((*arena)->fd(), (*arena)->bytes(), true);
  EXPECT_FALSE(refused.attached());
  EXPECT_NE(refused.why().find("past the 98304 bytes its clients may have it map"),
            std::string::npos)
      << refused.why();
  // A larger region in place of the first is refused too, and the first
  // stays: a push from it is applied.
  auto larger = SharedRegion::Create(128 << 10);
  PS_ASSERT_OK(larger);
  EXPECT_FALSE(Offer((*larger)->fd(), (*larger)->bytes()).attached());
  float* grad = reinterpret_cast<float*>((*region)->data());
  for (int i = 0; i < 1024; ++i) grad[i] = 1.0f;
  PS_ASSERT_OK(PushShmChunk(0));
  std::map<std::string, Tensor> out;
  int64_t step = -1;
  PS_ASSERT_OK(ps_.client->Pull(7, {}, &out, &step));
  EXPECT_EQ(step, 1);
  EXPECT_EQ(out["w"][0], 2.0f);
  // A smaller region in place of the first fits.
  auto smaller = SharedRegion::Create(32 << 10);
  PS_ASSERT_OK(smaller);
  ASSERT_NO_FATAL_FAILURE(Attach(**smaller));
  ASSERT_NO_FATAL_FAILURE(Attach(**smaller, /*arena=*/true));
  // Its connection gone (once the ps has seen it go), the next one has the
  // whole budget.
  ASSERT_NO_FATAL_FAILURE(UseLocalSocket());
  EXPECT_TRUE(WaitUntil([&] { return Offer((*region)->fd(), (*region)->bytes()).attached(); },
                        std::chrono::seconds(5)));
}

TEST_F(HostileSharedMemory, AShmChunkInAnArenaNeverOfferedIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto region = SharedRegion::Create(8192);
  PS_ASSERT_OK(region);
  ASSERT_NO_FATAL_FAILURE(Attach(**region));  // a region, but no arena
  const Status s = PushShmChunk(0, /*in_arena=*/true);
  ExpectRefused(s, "without an arena");
}

TEST_F(HostileSharedMemory, AShmChunkOutsideTheArenaIsRefused) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto arena = SharedArena::Create(8192);
  PS_ASSERT_OK(arena);
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
  PS_ASSERT_OK(arena);
  ASSERT_NO_FATAL_FAILURE(Attach(*(*arena)->region(), /*arena=*/true));
  char* base = (*arena)->region()->data();
  float* grad = reinterpret_cast<float*>(base);
  for (int i = 0; i < 1024; ++i) grad[i] = 1.0f;
  PS_ASSERT_OK(PushShmChunk(0, /*in_arena=*/true));  // w: 3 - 1 = 2

  const std::vector<std::pair<uint64_t, uint64_t>> rooms = {
      {4096, 4096}, {3 * 4096 - 4092, 4096}, {4096, 4092}};
  for (const auto& [at, bytes] : rooms) {
    std::memset(base + 4096, 0, 2 * 4096);
    proto::PullRequest pull;
    pull.set_placement_fingerprint(7);
    (*pull.mutable_arena_rooms())["w"].set_offset(at);
    (*pull.mutable_arena_rooms())["w"].set_bytes(bytes);
    PS_ASSERT_OK(WriteFrame(socket_.get(), FrameKind::kPullRequest, &pull));
    auto head = ReadFrame(socket_.get());
    PS_ASSERT_OK(head);
    ASSERT_EQ(head->kind, FrameKind::kPullReply);
    auto chunk = ReadFrame(socket_.get());
    PS_ASSERT_OK(chunk);
    const bool fits = at == 4096 && bytes == 4096;
    if (fits) {
      ASSERT_EQ(chunk->kind, FrameKind::kShmChunk);
      proto::ShmChunk shm;
      PS_ASSERT_OK(ParseMeta(*chunk, &shm));
      EXPECT_TRUE(shm.in_arena());
      EXPECT_EQ(shm.region_offset(), at);
      const float* values = reinterpret_cast<const float*>(base + at);
      for (int i = 0; i < 1024; ++i) ASSERT_EQ(values[i], 2.0f) << i;
      EXPECT_EQ(grad[0], 1.0f);  // nothing else written
    } else {
      ASSERT_EQ(chunk->kind, FrameKind::kChunk);  // on the socket
      std::vector<char> data(chunk->data_bytes);
      PS_ASSERT_OK(socket_->ReadFull(data.data(), data.size()));
      for (char* p = base + 4096; p < base + 3 * 4096; ++p) ASSERT_EQ(*p, 0);
    }
    auto end = ReadFrame(socket_.get());
    PS_ASSERT_OK(end);
    EXPECT_EQ(end->kind, FrameKind::kEnd);
  }
}

// A push naming rooms in the arena: w's value after it is written there
// (and nowhere else), and the reply says so. The same push again (its
// answer lost) is answered as before without a write. A room outside the
// arena, of another size than w, off a float's boundary, or for a name
// the push does not carry, or over the gradient the ps reads, is refused,
// and nothing is applied.
TEST_F(HostileSharedMemory, APushWritesTheValuesAfterItIntoItsArenaRooms) {
  SKIP_WITHOUT_SHARED_MEMORY();
  auto arena = SharedArena::Create(3 * 4096);
  PS_ASSERT_OK(arena);
  char* base = (*arena)->region()->data();
  float* grad = reinterpret_cast<float*>(base);
  for (int i = 0; i < 1024; ++i) grad[i] = 1.0f;
  auto push = [&](const std::string& name, uint64_t at, uint64_t bytes,
                  proto::PushResponse* reply) -> Status {
    proto::PushHeader header = PushOfW();
    header.set_incarnation(11);
    header.set_sequence(1);
    (*header.mutable_arena_rooms())[name].set_offset(at);
    (*header.mutable_arena_rooms())[name].set_bytes(bytes);
    const proto::ShmChunk chunk = ShmChunkOfW(0, /*in_arena=*/true);
    FrameBatch frames;
    frames.Add(FrameKind::kPushHeader, &header);
    frames.Add(FrameKind::kShmChunk, &chunk);
    frames.Add(FrameKind::kEnd, nullptr);
    return SendPush(frames, reply);
  };
  struct Bad {
    std::string name;
    uint64_t at, bytes;
    std::string why;
  };
  const std::vector<Bad> bads = {
      {"w", 3 * 4096 - 4092, 4096, "float-aligned bytes inside its 12288-byte arena"},
      {"w", 4096, 4092, "not 4096 float-aligned bytes"},
      {"w", 4098, 4096, "not 4096 float-aligned bytes"},
      {"v", 4096, 4096, "not a variable of this push"},
      {"w", 2048, 4096, "overlaps"}};  // the gradient, at 0
  for (const Bad& bad : bads) {
    ASSERT_NO_FATAL_FAILURE(Attach(*(*arena)->region(), /*arena=*/true));
    proto::PushResponse reply;
    ExpectRefused(push(bad.name, bad.at, bad.bytes, &reply), bad.why);
    ASSERT_NO_FATAL_FAILURE(UseLocalSocket());  // the ps closed that one
  }
  for (char* p = base + 4096; p < base + 3 * 4096; ++p) ASSERT_EQ(*p, 0);

  ASSERT_NO_FATAL_FAILURE(Attach(*(*arena)->region(), /*arena=*/true));
  proto::PushResponse reply;
  PS_ASSERT_OK(push("w", 4096, 4096, &reply));  // w: 3 - 1 = 2
  EXPECT_TRUE(reply.values_in_arena());
  EXPECT_EQ(reply.global_step(), 1);
  const float* values = reinterpret_cast<const float*>(base + 4096);
  for (int i = 0; i < 1024; ++i) ASSERT_EQ(values[i], 2.0f) << i;
  EXPECT_EQ(grad[0], 1.0f);
  for (char* p = base + 2 * 4096; p < base + 3 * 4096; ++p) ASSERT_EQ(*p, 0);

  std::memset(base + 4096, 0, 4096);
  PS_ASSERT_OK(push("w", 4096, 4096, &reply));  // a repeat: not applied
  EXPECT_FALSE(reply.values_in_arena());
  EXPECT_EQ(reply.global_step(), 1);
  for (char* p = base + 4096; p < base + 2 * 4096; ++p) ASSERT_EQ(*p, 0);
  std::map<std::string, Tensor> out;
  int64_t step = -1;
  PS_ASSERT_OK(ps_.client->Pull(7, {}, &out, &step));
  EXPECT_EQ(step, 1);
  EXPECT_EQ(out["w"][0], 2.0f);
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
