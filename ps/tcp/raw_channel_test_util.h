// RawChannelTest: a live ps (LoopbackPs) holding one variable, w = 3 x
// 1024 under plain gradient descent at rate 1, and a raw socket to its
// tensor channel, for tests that speak the frames themselves as a hostile
// client would, and check that a refused request changed nothing.
#ifndef PSTRAIN_PS_TCP_RAW_CHANNEL_TEST_UTIL_H_
#define PSTRAIN_PS_TCP_RAW_CHANNEL_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "ps/tcp/shared_region.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace tcp {

class RawChannelTest : public ::testing::Test {
 protected:
  // The tensor channel's limits for the test's ps.
  virtual ChannelLimits Limits() const { return {}; }

  void SetUp() override {
    PS_ASSERT_OK(ps_.Start(0, Limits()));
    proto::InitHeader header;
    header.set_placement_fingerprint(7);
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(1.0f);
    header.add_variables("w");
    header.set_holds_global_step(true);
    Tensor w({1024});
    w.Fill(3.0f);
    const Status init = ps_.client->Init(header, {{"w", &w}});
    ASSERT_TRUE(init.ok()) << init.ToString();
    ASSERT_NO_FATAL_FAILURE(UseTcp());
  }

  // From here on, socket_ is a new TCP connection, greeted by the ps.
  void UseTcp() {
    auto socket = Socket::Connect("127.0.0.1", ps_.server->tensor_port(), std::chrono::seconds(5));
    ASSERT_TRUE(socket.ok()) << socket.status().ToString();
    socket_ = std::move(socket).value();
    socket_->SetTimeout(std::chrono::seconds(5));
    const Status hello = ReadHello(socket_.get());
    ASSERT_TRUE(hello.ok()) << hello.ToString();
  }

  // A push of w's gradient as one ShmChunk frame naming `offset` in the
  // region, or in the arena.
  Status PushShmChunk(uint64_t offset, bool in_arena = false) {
    const proto::PushHeader header = PushOfW();
    const proto::ShmChunk chunk = ShmChunkOfW(offset, in_arena);
    FrameBatch push;
    push.Add(FrameKind::kPushHeader, &header);
    push.Add(FrameKind::kShmChunk, &chunk);
    push.Add(FrameKind::kEnd, nullptr);
    return SendPush(push);
  }

  // w's gradient as a ShmChunk at `offset` of the region or the arena.
  static proto::ShmChunk ShmChunkOfW(uint64_t offset, bool in_arena) {
    proto::ShmChunk chunk;
    chunk.mutable_head()->set_name("w");
    chunk.mutable_head()->mutable_meta()->set_dtype(proto::DT_FLOAT);
    chunk.mutable_head()->mutable_meta()->add_shape(1024);
    chunk.mutable_head()->set_total_bytes(4096);
    chunk.set_region_offset(offset);
    chunk.set_bytes(4096);
    chunk.set_in_arena(in_arena);
    return chunk;
  }

  // The header of a push of one gradient, for w.
  static proto::PushHeader PushOfW() {
    proto::PushHeader header;
    header.set_placement_fingerprint(7);
    header.set_increment_global_step(true);
    header.set_num_tensors(1);
    return header;
  }

  // A push of w's gradient `g` begun in *frames: its header and g's chunk,
  // not its End (g must outlive the frames).
  static void BeginPushOfW(const Tensor& g, FrameBatch* frames) {
    const proto::PushHeader header = PushOfW();
    frames->Add(FrameKind::kPushHeader, &header);
    frames->AddTensor("w", g, proto::DT_FLOAT);
  }

  // Sends a push's frames and reads the ps's answer: OkStatus for a
  // PushReply (parsed into *answer when given), the status of an Error
  // frame.
  Status SendPush(const FrameBatch& push, proto::PushResponse* answer = nullptr) {
    PS_RETURN_IF_ERROR(push.WriteTo(socket_.get()));
    PS_ASSIGN_OR_RETURN(Frame reply, ReadFrame(socket_.get()));
    if (reply.kind == FrameKind::kError) return ErrorOf(reply);
    if (answer == nullptr) return OkStatus();
    if (reply.kind != FrameKind::kPushReply) {
      return DataLoss(std::string("a ") + FrameKindName(reply.kind) + " frame in reply to a push");
    }
    return ParseMeta(reply, answer);
  }

  // From here on, socket_ is a connection to the ps's local socket, the
  // one that can carry descriptors, greeted by the ps.
  void UseLocalSocket() {
    auto socket =
        Socket::ConnectLocal(ps_.server->channel()->local_socket(), std::chrono::seconds(5));
    ASSERT_TRUE(socket.ok()) << socket.status().ToString();
    socket_ = std::move(socket).value();
    socket_->SetTimeout(std::chrono::seconds(5));
    const Status hello = ReadHello(socket_.get());
    ASSERT_TRUE(hello.ok()) << hello.ToString();
  }

  // Offers the memory of descriptor `fd` (-1: none) as `bytes` to the ps as
  // the connection's region or arena; the ps's answer.
  proto::ShmAttachReply Offer(int fd, uint64_t bytes, bool arena = false) {
    proto::ShmAttach attach;
    attach.set_bytes(bytes);
    FrameBatch frame;
    frame.Add(arena ? FrameKind::kShmAttachArena : FrameKind::kShmAttach, &attach);
    const Status sent = fd >= 0 ? frame.WriteTo(socket_.get(), fd) : frame.WriteTo(socket_.get());
    EXPECT_TRUE(sent.ok()) << sent.ToString();
    proto::ShmAttachReply reply;
    auto answer = ReadFrame(socket_.get());
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
    if (!answer.ok()) return reply;
    EXPECT_EQ(answer->kind, FrameKind::kShmAttachReply);
    PS_EXPECT_OK(ParseMeta(*answer, &reply));
    return reply;
  }

  // Offers `region` to the ps as the connection's region or arena; the ps
  // maps it.
  void Attach(const SharedRegion& region, bool arena = false) {
    const proto::ShmAttachReply reply = Offer(region.fd(), region.bytes(), arena);
    ASSERT_TRUE(reply.attached()) << reply.why();
  }

  // A push of w's gradient (0.5 everywhere) and a pull of w by a new
  // client over TCP, its calls' deadline `limit`; the step the pull saw.
  StatusOr<int64_t> PushAndPull(std::chrono::milliseconds limit) {
    PsClient client(0, "127.0.0.1:" + std::to_string(ps_.server->port()));
    client.set_shared_memory(false);
    client.set_transfer_timeout(limit);
    const proto::PushHeader header = PushOfW();
    Tensor g({1024});
    g.Fill(0.5f);
    PS_RETURN_IF_ERROR(client.Push(header, {{"w", &g}}).status());
    std::map<std::string, Tensor> out;
    int64_t step = -1;
    PS_RETURN_IF_ERROR(client.Pull(7, {}, &out, &step));
    return step;
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
    PS_ASSERT_OK(ps_.client->Pull(7, {}, &out, &step));
    EXPECT_EQ(step, 0);
    for (int64_t i = 0; i < 1024; ++i) ASSERT_EQ(out["w"][i], 3.0f) << i;
  }

  LoopbackPs ps_;
  std::unique_ptr<Socket> socket_;
};

}  // namespace tcp
}  // namespace pstrain

#endif  // PSTRAIN_PS_TCP_RAW_CHANNEL_TEST_UTIL_H_
