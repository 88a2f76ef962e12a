// Clients slow to read their replies hold bytes, not threads
// (reply_writer.h): a reply the socket does not take at once waits on the
// ps's event loop, and reaches its client whole and in order when it
// reads, over TCP and over TLS; past their budget, a reply's thread waits
// for its client instead; a reply not read within its deadline closes its
// connection.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "core/tls.h"
#include "core/tls_certs.h"
#include "ps/tcp/socket.h"
#include "ps/tcp/tensor_frames.h"
#include "ps/tcp/tls_stream.h"
#include "ps/tensor_chunks.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace tcp {
namespace {

class SlowReaders : public ::testing::Test {
 protected:
  // 8 MiB a reply: more than a loopback socket's buffers take at once.
  static constexpr int64_t kElements = int64_t{2} << 20;

  // A ps holding w (kElements values, w[i] = i % 1000) on a tensor
  // channel under `limits`.
  void StartPs(const ChannelLimits& limits) {
    PS_ASSERT_OK(ps_.Start(0, limits));
    proto::InitHeader header;
    header.set_placement_fingerprint(7);
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(1.0f);
    header.add_variables("w");
    Tensor w({kElements});
    for (int64_t i = 0; i < kElements; ++i) w[i] = static_cast<float>(i % 1000);
    const Status init = ps_.client->Init(header, {{"w", &w}});
    ASSERT_TRUE(init.ok()) << init.ToString();
  }
  const TensorChannelServer& channel() { return *ps_.server->channel(); }

  // A new connection that has asked for w, and reads nothing yet.
  std::unique_ptr<Socket> AskForW() {
    auto socket = Socket::Connect("127.0.0.1", ps_.server->tensor_port(), std::chrono::seconds(5));
    EXPECT_TRUE(socket.ok()) << socket.status().ToString();
    if (!socket.ok()) return nullptr;
    (*socket)->SetTimeout(std::chrono::seconds(10));
    Ask(socket->get());
    return std::move(socket).value();
  }
  // Reads the ps's Hello on `stream` and asks it for w.
  static void Ask(ByteStream* stream) {
    const Status hello = ReadHello(stream);
    EXPECT_TRUE(hello.ok()) << hello.ToString();
    proto::PullRequest pull;
    pull.set_placement_fingerprint(7);
    const Status sent = WriteFrame(stream, FrameKind::kPullRequest, &pull);
    EXPECT_TRUE(sent.ok()) << sent.ToString();
  }

  // Reads the reply AskForW asked for: every value of w, in order.
  void ExpectW(ByteStream* socket) {
    TensorAssembler assembler;
    for (bool replied = false;;) {
      auto frame = ReadFrame(socket);
      ASSERT_TRUE(frame.ok()) << frame.status().ToString();
      if (frame->kind == FrameKind::kPullReply) {
        replied = true;
        continue;
      }
      if (frame->kind == FrameKind::kEnd) break;
      ASSERT_TRUE(replied && frame->kind == FrameKind::kChunk) << FrameKindName(frame->kind);
      const Status read = ReadChunk(socket, *frame, &assembler);
      ASSERT_TRUE(read.ok()) << read.ToString();
    }
    std::map<std::string, Tensor> out;
    const Status whole = assembler.FinishInto(&out);
    ASSERT_TRUE(whole.ok()) << whole.ToString();
    ASSERT_EQ(out["w"].size(), kElements);
    for (int64_t i = 0; i < kElements; ++i) {
      ASSERT_EQ(out["w"][i], static_cast<float>(i % 1000)) << i;
    }
  }

  // n replies wait on the loop, and no request holds a thread.
  void ExpectRepliesOnTheLoop(int n) {
    ASSERT_TRUE(WaitUntil([&] {
      const auto c = channel().counts();
      return c.sending == n && c.serving == 0;
    })) << "sending "
        << channel().counts().sending << ", serving " << channel().counts().serving;
  }
  // Every reply sent, its bytes given back.
  void ExpectNothingKept() {
    EXPECT_TRUE(WaitUntil([&] {
      const auto c = channel().counts();
      return c.sending == 0 && c.kept_reply_bytes == 0;
    })) << channel().counts().kept_reply_bytes
        << " bytes still kept";
  }

  LoopbackPs ps_;
};

// Slow clients each ask for 8 MiB and read none of it: every reply waits
// on the loop, no thread serving any of them (so however many there are,
// they take none of the ps's), a new client is served meanwhile, then
// each client reads its reply whole. (A client that reads nothing for
// Socket::kUnackedTimeout is cut off by the kernel.)
TEST_F(SlowReaders, HoldNoThreadWhileTheirRepliesWait) {
  ChannelLimits limits;
  // The last reply waits for the client to read the others first.
  limits.frames.frame = std::chrono::minutes(5);
  ASSERT_NO_FATAL_FAILURE(StartPs(limits));
  const int n = 4;
  std::vector<std::unique_ptr<Socket>> slow;
  for (int i = 0; i < n; ++i) {
    slow.push_back(AskForW());
    ASSERT_NE(slow.back(), nullptr);
  }
  ASSERT_NO_FATAL_FAILURE(ExpectRepliesOnTheLoop(n));
  EXPECT_GT(channel().counts().kept_reply_bytes, 0u);
  std::map<std::string, Tensor> out;
  const Status pulled = ps_.client->Pull(7, {}, &out, nullptr);
  EXPECT_TRUE(pulled.ok()) << pulled.ToString();
  for (auto& s : slow) ASSERT_NO_FATAL_FAILURE(ExpectW(s.get()));
  ExpectNothingKept();
}

// The same over TLS: the rest of each reply waits on the loop as
// plaintext, and goes out encrypted as its client reads.
TEST_F(SlowReaders, OverTlsHoldNoThreadEither) {
  auto ca = MakeCa("pstrain test CA");
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  auto cert = MakeCert(*ca, {"ps0", {"127.0.0.1"}});
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  auto files = CheckTlsFiles({cert->cert_pem, cert->key_pem, ca->cert_pem, ""});
  ASSERT_TRUE(files.ok()) << files.status().ToString();
  SetTaskTls(&*files);  // the ps's servers and its test client take it
  struct Untls {
    ~Untls() { SetTaskTls(nullptr); }
  } untls;
  ChannelLimits limits;
  limits.frames.frame = std::chrono::minutes(5);
  ASSERT_NO_FATAL_FAILURE(StartPs(limits));
  auto ctx = MakeClientSslCtx(*files);
  ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
  constexpr int n = 4;
  std::vector<std::unique_ptr<Socket>> sockets;
  std::vector<std::unique_ptr<TlsStream>> slow;
  for (int i = 0; i < n; ++i) {
    auto socket = Socket::Connect("127.0.0.1", ps_.server->tensor_port(), std::chrono::seconds(5));
    ASSERT_TRUE(socket.ok()) << socket.status().ToString();
    (*socket)->SetTimeout(std::chrono::seconds(10));
    auto tls = TlsStream::Connect(ctx->get(), socket->get(), "127.0.0.1");
    ASSERT_TRUE(tls.ok()) << tls.status().ToString();
    ASSERT_NO_FATAL_FAILURE(Ask(tls->get()));
    sockets.push_back(std::move(socket).value());
    slow.push_back(std::move(tls).value());
  }
  ASSERT_NO_FATAL_FAILURE(ExpectRepliesOnTheLoop(n));
  for (auto& s : slow) ASSERT_NO_FATAL_FAILURE(ExpectW(s.get()));
  ExpectNothingKept();
}

// With 1 MiB for replies to wait in, two slow clients' threads write their
// 8 MiB replies themselves as their clients read: the replies still come
// whole, and no more than the budget is ever kept.
TEST_F(SlowReaders, PastTheBudgetAReplysThreadWaitsForItsClient) {
  ChannelLimits limits;
  limits.max_kept_reply_bytes = uint64_t{1} << 20;
  limits.frames.frame = std::chrono::minutes(5);
  ASSERT_NO_FATAL_FAILURE(StartPs(limits));
  auto a = AskForW(), b = AskForW();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return channel().counts().serving == 2; }));
  EXPECT_LE(channel().counts().kept_reply_bytes, limits.max_kept_reply_bytes);
  ASSERT_NO_FATAL_FAILURE(ExpectW(a.get()));
  ASSERT_NO_FATAL_FAILURE(ExpectW(b.get()));
  EXPECT_TRUE(WaitUntil([&] {
    const auto c = channel().counts();
    return c.serving == 0 && c.sending == 0 && c.kept_reply_bytes == 0;
  }));
}

// A reply nobody reads is given up at its deadline (the frame timeout,
// plus a second per 16 MiB): the connection closes and its bytes go.
TEST_F(SlowReaders, AReplyNotReadWithinItsDeadlineClosesItsConnection) {
  ChannelLimits limits;
  limits.frames.frame = std::chrono::seconds(1);
  ASSERT_NO_FATAL_FAILURE(StartPs(limits));
  const int before = channel().counts().connections;
  auto s = AskForW();
  ASSERT_NE(s, nullptr);
  ASSERT_TRUE(WaitUntil([&] { return channel().counts().sending == 1; }));
  EXPECT_TRUE(WaitUntil([&] {
    const auto c = channel().counts();
    return c.sending == 0 && c.connections == before && c.kept_reply_bytes == 0;
  })) << channel().counts().connections
      << " connections, " << before << " before";
  // What the ps had sent is there to read; then the stream ends, the
  // reply never whole.
  TensorAssembler assembler;
  Status read;
  for (;;) {
    auto frame = ReadFrame(s.get());
    if (!frame.ok()) {
      read = frame.status();
      break;
    }
    ASSERT_NE(frame->kind, FrameKind::kEnd);
    if (frame->kind == FrameKind::kChunk) {
      read = ReadChunk(s.get(), *frame, &assembler);
      if (!read.ok()) break;
    }
  }
  EXPECT_EQ(read.code(), Code::kUnavailable) << read.ToString();
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
