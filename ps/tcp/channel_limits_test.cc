// What keeps clients from crashing or starving a live ps through its
// tensor channel (ps/tcp/tensor_channel_server.h): idle connections cost
// no thread, senders that trickle bytes and connections that send nothing
// are closed at their deadlines, connections past a cap take the place of
// the idlest, a client the channel refuses goes over gRPC, and waits for a
// step end with their clients.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "core/descriptor_limit.h"
#include "core/testing/status_assertions.h"
#include "ps/rpc/ps_service.h"
#include "ps/tcp/raw_channel_test_util.h"

namespace pstrain {
namespace tcp {
namespace {

using Clock = std::chrono::steady_clock;

// Whether the ps has closed `socket`: a read ends within `limit`.
bool ClosedByPs(Socket* socket, std::chrono::milliseconds limit) {
  socket->SetTimeout(limit);
  char byte;
  for (;;) {
    const Status s = socket->ReadFull(&byte, 1);
    if (s.code() == Code::kUnavailable) return true;  // the end of the stream
    if (!s.ok()) return false;                        // still open at the limit
  }
}

// Lets this process hold `n` descriptors.
void AllowDescriptors(uint64_t n) {
  const uint64_t limit = RaiseDescriptorLimit();
  if (limit < n) GTEST_SKIP() << "at most " << limit << " descriptors here";
}

// n new connections, each greeted by the ps, that then send nothing.
std::vector<std::unique_ptr<Socket>> OpenIdle(int port, int n) {
  std::vector<std::unique_ptr<Socket>> sockets;
  for (int i = 0; i < n; ++i) {
    auto s = Socket::Connect("127.0.0.1", port, std::chrono::seconds(5));
    EXPECT_TRUE(s.ok()) << i << ": " << s.status().ToString();
    if (!s.ok()) break;
    (*s)->SetTimeout(std::chrono::seconds(5));
    const Status hello = ReadHello(s->get());
    EXPECT_TRUE(hello.ok()) << i << ": " << hello.ToString();
    sockets.push_back(std::move(s).value());
  }
  return sockets;
}

class ChannelFlood : public RawChannelTest {
 protected:
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    // The 1,020 connections must not reach their first-request deadline
    // while the test opens them, however busy the machine.
    limits.handshake = std::chrono::minutes(5);
    limits.frames.frame = std::chrono::milliseconds(1000);
    // Between a push's frames: long enough for a busy machine to start
    // every streamed push first.
    limits.frames.idle = std::chrono::milliseconds(4000);
    return limits;
  }
};

// 1,000 idle connections hold no thread; 20 senders of a byte every 100 ms
// are closed at their frame's deadline; meanwhile a new client's push and
// pull are served.
TEST_F(ChannelFlood, IdleConnectionsHoldNoThreadAndSlowSendersAreCutOff) {
  ASSERT_NO_FATAL_FAILURE(AllowDescriptors(4096));
  const int port = ps_.server->tensor_port();
  auto idle = OpenIdle(port, 1000);
  ASSERT_EQ(idle.size(), 1000u);
  auto slow = OpenIdle(port, 20);
  ASSERT_EQ(slow.size(), 20u);
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    // What a slowloris sends: a request's bytes, one every 100 ms.
    proto::PullRequest pull;
    pull.set_placement_fingerprint(7);
    FrameBatch frame;
    frame.Add(FrameKind::kPullRequest, &pull);
    std::string bytes(kFrameHeaderBytes + pull.ByteSizeLong(), '\0');
    for (size_t i = 0; i < bytes.size() && !stop; ++i) {
      for (auto& s : slow) {
        struct iovec one = {&bytes[i], 1};
        (void)s->Write(&one, 1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  const auto& channel = *ps_.server->channel();
  ASSERT_TRUE(
      WaitUntil([&] { return channel.counts().connections >= 1020; }, std::chrono::seconds(10)));
  auto pushed = PushAndPull(std::chrono::seconds(10));
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(*pushed, 1);
  for (auto& s : slow) EXPECT_TRUE(ClosedByPs(s.get(), std::chrono::seconds(10)));
  stop = true;
  trickle.join();
  // The slow senders' threads are back; the idle connections never had one.
  EXPECT_TRUE(WaitUntil([&] { return channel.counts().serving == 0; }, std::chrono::seconds(5)));
  EXPECT_LE(channel.counts().threads, 25);
  EXPECT_GE(channel.counts().connections, 1000);
  for (auto& s : idle) EXPECT_FALSE(s->ReadableNow());  // none of them was closed
}

// More pushes under way than the ps has threads, each streamed as backward
// makes its tensors (the End not sent yet): none holds a thread while it
// comes, a new client's push and pull are served meanwhile, a push applies
// once its End comes, and one whose next frame does not begin within the
// idle limit is closed.
TEST_F(ChannelFlood, StreamedPushesHoldNoThreadWhileTheirFramesCome) {
  const auto& channel = *ps_.server->channel();
  const int threads = channel.counts().threads;
  ASSERT_GT(threads, 0);
  auto streaming = OpenIdle(ps_.server->tensor_port(), threads + 8);
  ASSERT_EQ(static_cast<int>(streaming.size()), threads + 8);
  Tensor g({1024});
  g.Fill(1.0f);
  FrameBatch begun;
  BeginPushOfW(g, &begun);
  for (auto& s : streaming) ASSERT_TRUE(begun.WriteTo(s.get()).ok());
  ASSERT_TRUE(
      WaitUntil([&] { return channel.counts().gathering == threads + 8; }, std::chrono::seconds(5)))
      << channel.counts().gathering << " of " << threads + 8 << " gathering";
  EXPECT_EQ(channel.counts().serving, 0);
  auto pushed = PushAndPull(std::chrono::seconds(5));
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(*pushed, 1);
  // The first push's End: applied (w = 3 - 0.5 - 1).
  FrameBatch end;
  end.Add(FrameKind::kEnd, nullptr);
  PS_ASSERT_OK(end.WriteTo(streaming[0].get()));
  auto reply = ReadFrame(streaming[0].get());
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->kind, FrameKind::kPushReply) << FrameKindName(reply->kind);
  std::map<std::string, Tensor> out;
  int64_t step = -1;
  PS_ASSERT_OK(ps_.client->Pull(7, {}, &out, &step));
  EXPECT_EQ(step, 2);
  EXPECT_EQ(out["w"][0], 1.5f);
  // The others never send their End: each is closed at the idle limit,
  // having held no thread, and its gradient is never applied.
  for (size_t i = 1; i < streaming.size(); ++i) {
    EXPECT_TRUE(ClosedByPs(streaming[i].get(), std::chrono::seconds(10))) << i;
  }
  EXPECT_EQ(channel.counts().gathering, 0);
  PS_ASSERT_OK(ps_.client->Pull(7, {}, &out, &step));
  EXPECT_EQ(step, 2);
}

class SmallChannel : public RawChannelTest {
 protected:
  // Connections are closed by the caps alone: none reaches its deadline
  // while a test runs, however busy the machine.
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    limits.max_connections = 4;
    limits.max_per_peer = 3;
    limits.handshake = std::chrono::minutes(5);
    return limits;
  }
};

class ShortHandshake : public RawChannelTest {
 protected:
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    limits.handshake = std::chrono::milliseconds(300);
    return limits;
  }
};

// A connection that sends nothing is closed at the handshake limit; the
// ps says so in an Error frame whose hint, not its words, tells the client
// that a request crossing it was not read (to be sent again).
TEST_F(ShortHandshake, AConnectionThatSendsNothingIsClosed) {
  socket_->SetTimeout(std::chrono::seconds(10));
  auto frame = ReadFrame(socket_.get());
  ASSERT_TRUE(frame.ok()) << frame.status().ToString();
  ASSERT_EQ(frame->kind, FrameKind::kError);
  const Status why = ErrorOf(*frame);
  EXPECT_EQ(why.code(), Code::kUnavailable) << why.ToString();
  EXPECT_EQ(why.hint(), Hint::kUnread) << why.ToString();
  EXPECT_TRUE(ClosedByPs(socket_.get(), std::chrono::seconds(10)));
}

// Past the per-peer cap, a new connection from that peer takes the place
// of its idlest; past the overall cap, of the idlest of all.
TEST_F(SmallChannel, ANewConnectionTakesTheIdlestsPlace) {
  const int port = ps_.server->tensor_port();
  // socket_ is one of the fixture's; two more make three from 127.0.0.1.
  auto mine = OpenIdle(port, 2);
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->channel()->counts().connections == 3; },
                        std::chrono::seconds(5)));
  auto fourth = OpenIdle(port, 1);
  EXPECT_TRUE(ClosedByPs(socket_.get(), std::chrono::seconds(5)));  // the idlest
  EXPECT_FALSE(mine[0]->ReadableNow());
  EXPECT_EQ(ps_.server->channel()->counts().connections, 3);
  // A local connection is a peer of its own: room for it, and past the
  // overall cap of 4 it takes the idlest TCP connection's place.
  auto local1 =
      Socket::ConnectLocal(ps_.server->channel()->local_socket(), std::chrono::seconds(5));
  PS_ASSERT_OK(local1);
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->channel()->counts().connections == 4; },
                        std::chrono::seconds(5)));
  auto local2 =
      Socket::ConnectLocal(ps_.server->channel()->local_socket(), std::chrono::seconds(5));
  PS_ASSERT_OK(local2);
  EXPECT_TRUE(ClosedByPs(mine[0].get(), std::chrono::seconds(5)));
  EXPECT_EQ(ps_.server->channel()->counts().connections, 4);
}

// With every connection busy (waiting for a step), a new one is refused
// with the reason, and a client refused so pushes and pulls over gRPC.
TEST_F(SmallChannel, WhenAllAreBusyANewConnectionIsRefusedAndTheClientGoesOverGrpc) {
  const int port = ps_.server->tensor_port();
  std::vector<std::unique_ptr<Socket>> waiting;
  waiting.push_back(std::move(socket_));
  for (auto& s : OpenIdle(port, 2)) waiting.push_back(std::move(s));
  waiting.push_back(std::move(Socket::ConnectLocal(ps_.server->channel()->local_socket(),
                                                   std::chrono::seconds(5)))
                        .value());
  proto::PullRequest far;
  far.set_placement_fingerprint(7);
  far.set_min_step(int64_t{1} << 62);
  far.set_wait_deadline_ms(60000);
  for (auto& s : waiting) ASSERT_TRUE(WriteFrame(s.get(), FrameKind::kPullRequest, &far).ok());
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->waiting_pulls() == 4; }, std::chrono::seconds(5)));
  auto refused = Socket::Connect("127.0.0.1", port, std::chrono::seconds(5));
  PS_ASSERT_OK(refused);
  (*refused)->SetTimeout(std::chrono::seconds(5));
  const Status why = ReadHello(refused->get());
  EXPECT_EQ(why.code(), Code::kResourceExhausted);
  EXPECT_EQ(why.hint(), Hint::kNotSent) << "the client could not tell it may go over gRPC";
  EXPECT_NE(why.message().find("tensor channel refused a connection: all 3 connections from "
                               "127.0.0.1 are busy"),
            std::string::npos)
      << why.ToString();
  auto pushed = PushAndPull(std::chrono::seconds(10));
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(*pushed, 1);
}

class AbandonedWaits : public RawChannelTest {
 protected:
  // Every waiter's connection from one address.
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    limits.max_per_peer = limits.max_connections;
    // 2,000 connections opened before their pulls are written: none may
    // reach its first-request deadline meanwhile, however busy the machine.
    limits.handshake = std::chrono::minutes(5);
    return limits;
  }
  // A pull for a step that never comes.
  static proto::PullRequest FarPull() {
    proto::PullRequest far;
    far.set_placement_fingerprint(7);
    far.set_min_step(int64_t{1} << 62);
    return far;
  }
  // `n` far pulls over gRPC, each on a thread of its own until its call
  // ends; calls gets their contexts, to cancel them.
  static void StartFarPulls(proto::Ps::Stub* stub, int n,
                            std::vector<std::unique_ptr<grpc::ClientContext>>* calls,
                            std::vector<std::thread>* threads) {
    for (int i = 0; i < n; ++i) calls->push_back(std::make_unique<grpc::ClientContext>());
    for (int i = 0; i < n; ++i) {
      grpc::ClientContext* ctx = (*calls)[i].get();
      threads->emplace_back([stub, ctx] {
        ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(10));
        auto reader = stub->Pull(ctx, FarPull());
        proto::PullResponse reply;
        while (reader->Read(&reply)) {
        }
        (void)reader->Finish();
      });
    }
  }
};

// 2,000 pulls waiting for a far step hold no thread: every one waits at
// once (none waits for its peer's turn), and a push and a pull are served
// meanwhile. When their clients hang up, their waits and connections end.
TEST_F(AbandonedWaits, HoldNoThreadAndEndWithTheirClientsOnTheTensorChannel) {
  ASSERT_NO_FATAL_FAILURE(AllowDescriptors(8192));
  constexpr int kWaits = 2000;
  auto sockets = OpenIdle(ps_.server->tensor_port(), kWaits);
  ASSERT_EQ(sockets.size(), static_cast<size_t>(kWaits));
  proto::PullRequest far;
  far.set_placement_fingerprint(7);
  far.set_min_step(int64_t{1} << 62);
  far.set_wait_deadline_ms(600000);
  for (auto& s : sockets) ASSERT_TRUE(WriteFrame(s.get(), FrameKind::kPullRequest, &far).ok());
  const auto& channel = *ps_.server->channel();
  ASSERT_TRUE(
      WaitUntil([&] { return ps_.server->waiting_pulls() == kWaits; }, std::chrono::seconds(60)))
      << ps_.server->waiting_pulls() << " of " << kWaits << " pulls wait";
  EXPECT_TRUE(WaitUntil([&] { return channel.counts().serving == 0; }, std::chrono::seconds(5)));
  EXPECT_EQ(channel.counts().waiting, 0);
  EXPECT_LE(channel.counts().threads, PsServer::kRequestThreads);
  EXPECT_EQ(channel.counts().connections, kWaits + 1);
  auto pushed = PushAndPull(std::chrono::seconds(10));
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(*pushed, 1);
  sockets.clear();  // the clients hang up
  EXPECT_TRUE(WaitUntil([&] { return ps_.server->waiting_pulls() == 0; }, std::chrono::seconds(30)))
      << ps_.server->waiting_pulls() << " pulls still wait";
  EXPECT_TRUE(WaitUntil([&] { return channel.counts().connections == 1; },  // the fixture's
                        std::chrono::seconds(30)));
}

// The same over gRPC: a cancelled call's wait ends.
TEST_F(AbandonedWaits, EndWithTheirClientsOverGrpc) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(ps_.server->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = proto::Ps::NewStub(channel);
  constexpr int kCalls = 16;
  std::vector<std::unique_ptr<grpc::ClientContext>> calls;
  std::vector<std::thread> threads;
  StartFarPulls(stub.get(), kCalls, &calls, &threads);
  ASSERT_TRUE(
      WaitUntil([&] { return ps_.server->waiting_pulls() == kCalls; }, std::chrono::seconds(20)));
  for (auto& c : calls) c->TryCancel();
  EXPECT_TRUE(
      WaitUntil([&] { return ps_.server->waiting_pulls() == 0; }, std::chrono::seconds(30)));
  for (auto& t : threads) t.join();
}

// Over gRPC too, pulls waiting for a step hold none of the request
// threads: 300 of them (more than the threads) wait at once, and a push and
// a pull are served meanwhile.
TEST_F(AbandonedWaits, HoldNoThreadOverGrpc) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(ps_.server->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = proto::Ps::NewStub(channel);
  constexpr int kCalls = 300;
  std::vector<std::unique_ptr<grpc::ClientContext>> calls;
  std::vector<std::thread> threads;
  StartFarPulls(stub.get(), kCalls, &calls, &threads);
  ASSERT_TRUE(
      WaitUntil([&] { return ps_.server->waiting_pulls() == kCalls; }, std::chrono::seconds(60)))
      << ps_.server->waiting_pulls() << " of " << kCalls << " pulls wait";
  EXPECT_LE(ps_.server->channel()->counts().threads, PsServer::kRequestThreads);
  auto pushed = PushAndPull(std::chrono::seconds(10));
  EXPECT_TRUE(pushed.ok()) << pushed.status().ToString();
  for (auto& c : calls) c->TryCancel();
  EXPECT_TRUE(WaitUntil([&] { return ps_.server->waiting_pulls() == 0; }, std::chrono::seconds(5)));
  for (auto& t : threads) t.join();
}

// Every wait has a deadline, and its client states it: the tensor channel
// has no call deadline, so a wait without wait_deadline_ms is refused.
TEST_F(AbandonedWaits, AWaitWithoutADeadlineIsRefused) {
  proto::PullRequest far;
  far.set_placement_fingerprint(7);
  far.set_min_step(5);
  PS_ASSERT_OK(WriteFrame(socket_.get(), FrameKind::kPullRequest, &far));
  auto frame = ReadFrame(socket_.get());
  PS_ASSERT_OK(frame);
  const Status why = ErrorOf(*frame);
  EXPECT_EQ(why.code(), Code::kInvalidArgument);
  EXPECT_NE(why.message().find("a wait for step 5 needs a deadline"), std::string::npos)
      << why.ToString();
  EXPECT_EQ(ps_.server->waiting_pulls(), 0);
}

class IdleChannel : public RawChannelTest {
 protected:
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    limits.handshake = std::chrono::milliseconds(200);
    limits.idle = std::chrono::milliseconds(200);
    return limits;
  }
};

// The ps closes a client's pooled connection once idle for its limit; the
// client's next call opens another rather than failing.
TEST_F(IdleChannel, AClientWhoseIdleConnectionWasClosedCarriesOn) {
  PsClient client(0, "127.0.0.1:" + std::to_string(ps_.server->port()));
  client.set_shared_memory(false);
  Tensor g({1024});
  g.Fill(0.5f);
  PS_ASSERT_OK(client.Push(PushOfW(), {{"w", &g}}));
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->channel()->counts().connections == 0; },
                        std::chrono::seconds(5)));
  EXPECT_TRUE(ClosedByPs(socket_.get(), std::chrono::seconds(5)));
  auto pushed = client.Push(PushOfW(), {{"w", &g}});
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  std::map<std::string, Tensor> out;
  int64_t step = -1;
  PS_ASSERT_OK(client.Pull(7, {}, &out, &step));
  EXPECT_EQ(step, 2);
  EXPECT_EQ(out["w"][0], 2.0f);  // 3 - 0.5 - 0.5
}

class OneRequestPerPeer : public RawChannelTest {
 protected:
  ChannelLimits Limits() const override {
    ChannelLimits limits;
    limits.max_requests_per_peer = 1;
    // A push past 1 KB is served before it is whole: one begun holds its
    // peer's turn.
    limits.gather_bytes = 1024;
    return limits;
  }
};

// A request that waited for its peer's turn is not served once its client
// has gone: what it sent is stale (a push from an arena may have been
// overwritten since).
TEST_F(OneRequestPerPeer, ARequestWhoseClientLeftWhileItWaitedIsNotServed) {
  auto sockets = OpenIdle(ps_.server->tensor_port(), 2);
  Tensor g({1024});
  g.Fill(1.0f);
  // A push being served, its end not sent yet: the peer's one turn.
  FrameBatch begun;
  BeginPushOfW(g, &begun);
  PS_ASSERT_OK(begun.WriteTo(sockets[0].get()));
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->channel()->counts().serving == 1; },
                        std::chrono::seconds(5)));
  // A whole push behind it, from the same peer, whose client then leaves.
  FrameBatch push;
  BeginPushOfW(g, &push);
  push.Add(FrameKind::kEnd, nullptr);
  PS_ASSERT_OK(push.WriteTo(sockets[1].get()));
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->channel()->counts().waiting == 1; },
                        std::chrono::seconds(5)));
  sockets[1].reset();
  sockets[0].reset();  // the first push breaks off, and the second's turn comes
  ASSERT_TRUE(WaitUntil([&] { return ps_.server->channel()->counts().connections == 1; },
                        std::chrono::seconds(5)));
  ExpectUnchanged();
}

// A tensor port another process holds is an error at the start, which the
// ps reports (a retryable exit), not a crash.
TEST(TensorChannelStart, ABusyPortIsAnError) {
  auto taken = Listener::Listen("127.0.0.1", 0);
  PS_ASSERT_OK(taken);
  LoopbackPs ps;
  const Status s = ps.Start((*taken)->port());
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("cannot listen on 127.0.0.1:" + std::to_string((*taken)->port())),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace tcp
}  // namespace pstrain
