// Client streams (ps/rpc/gathering_reader.h) against a live ps over real
// gRPC: more pushes under way than the ps has threads gather without one
// and are each applied once their stream ends; a stream idle past its
// limit is cancelled, before or after a thread took it, and applies
// nothing.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "ps/rpc/generic_call.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/ps_service.h"
#include "ps/tensor_chunks.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace {

constexpr int64_t kFloats = 1024;

grpc::ByteBuffer Buffer(const google::protobuf::Message& m) {
  grpc::Slice slice(m.SerializeAsString());
  return grpc::ByteBuffer(&slice, 1);
}

// A ps holding w = 3 x 1024 under plain descent at rate 1, served over
// gRPC alone, whose client streams gather at most `gather` bytes each and
// may idle for `idle`.
class GatheringStreams : public ::testing::Test {
 protected:
  void Start(size_t gather, std::chrono::milliseconds idle, uint64_t all = uint64_t{256} << 20) {
    tcp::ChannelLimits limits;
    limits.gather_bytes = gather;
    limits.max_gathered_bytes = all;
    limits.frames.idle = idle;
    PS_ASSERT_OK(ps_.Start(/*tensor_port=*/-1, limits));
    proto::InitHeader header;
    header.set_placement_fingerprint(7);
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(1.0f);
    header.add_variables("w");
    header.set_holds_global_step(true);
    Tensor w({kFloats});
    w.Fill(3.0f);
    PS_ASSERT_OK(ps_.client->Init(header, {{"w", &w}}));
    stub_ = std::make_unique<grpc::GenericStub>(
        grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(ps_.server->port()),
                                  grpc::InsecureChannelCredentials(), DefaultChannelArguments()));
  }

  // A push stream opened with its header sent, and, with `chunk`, w's
  // gradient (0.5 everywhere); its End (WritesDone) not sent.
  std::unique_ptr<GenericCall> BeginPush(grpc::ClientContext* ctx, bool chunk) {
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    auto call = std::make_unique<GenericCall>(stub_.get(), ctx, "/pstrain.proto.Ps/Push");
    proto::PushRequest header;
    header.mutable_header()->set_placement_fingerprint(7);
    header.mutable_header()->set_increment_global_step(true);
    header.mutable_header()->set_num_tensors(1);
    EXPECT_TRUE(call->Write(Buffer(header)));
    if (chunk) {
      Tensor g({kFloats});
      g.Fill(0.5f);
      proto::PushRequest message;
      ForEachChunk("w", g, 1 << 20, message.mutable_chunk(), [&] {
        EXPECT_TRUE(call->Write(Buffer(message)));
        return true;
      });
    }
    return call;
  }

  // Sends a begun push's End; the ps answers it OK.
  static void EndPush(GenericCall* call) {
    ASSERT_TRUE(call->WritesDone());
    grpc::ByteBuffer reply;
    EXPECT_TRUE(call->Read(&reply));
    const grpc::Status s = call->Finish();
    EXPECT_TRUE(s.ok()) << s.error_message();
  }

  // w[0] and global_step on the ps now.
  std::pair<float, int64_t> State() {
    std::map<std::string, Tensor> out;
    int64_t step = -1;
    const Status s = ps_.client->Pull(7, {}, &out, &step);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return {s.ok() ? out["w"][0] : -1.0f, step};
  }

  const StreamWatch& streams() const { return ps_.server->service().streams(); }

  LoopbackPs ps_;
  std::unique_ptr<grpc::GenericStub> stub_;
};

// 40 pushes under way on a ps of 32 request threads hold none of them:
// all are gathered at once, a new client pushes and pulls meanwhile, and
// each is applied once its stream ends.
TEST_F(GatheringStreams, PushesUnderWayHoldNoThreadAndApplyOnceWhole) {
  ASSERT_NO_FATAL_FAILURE(Start(size_t{1} << 20, std::chrono::seconds(60)));
  constexpr int kPushes = PsServer::kRequestThreads + 8;
  std::vector<grpc::ClientContext> contexts(kPushes);
  std::vector<std::unique_ptr<GenericCall>> calls;
  for (int i = 0; i < kPushes; ++i) calls.push_back(BeginPush(&contexts[i], /*chunk=*/true));
  ASSERT_TRUE(WaitUntil([&] { return streams().watched() == kPushes; }))
      << streams().watched() << " of " << kPushes << " gathered";
  // Their gradients come in after their headers.
  EXPECT_TRUE(WaitUntil([&] { return streams().held_bytes() >= kPushes * kFloats * 4; }))
      << streams().held_bytes() << " bytes held";
  EXPECT_EQ(State(), std::make_pair(3.0f, int64_t{0}));  // none applied yet
  Tensor g({kFloats});
  g.Fill(0.5f);
  proto::PushHeader header;
  header.set_placement_fingerprint(7);
  header.set_increment_global_step(true);
  PsClient fresh(0, "127.0.0.1:" + std::to_string(ps_.server->port()));
  fresh.set_transfer_timeout(std::chrono::seconds(10));
  auto pushed = fresh.Push(header, {{"w", &g}});
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->global_step(), 1);
  for (auto& call : calls) ASSERT_NO_FATAL_FAILURE(EndPush(call.get()));
  EXPECT_EQ(State(), std::make_pair(3.0f - 0.5f * (kPushes + 1), int64_t{kPushes + 1}));
  EXPECT_EQ(streams().watched(), 0);
  EXPECT_EQ(streams().held_bytes(), 0);
}

// With every call's bytes past the cap of all of them, each is served as
// it stands, its thread reading the rest: none is left neither served nor
// reading, and each applies once its stream ends.
TEST_F(GatheringStreams, PastTheCapOfAllCallsEachIsServedAsItStands) {
  ASSERT_NO_FATAL_FAILURE(Start(size_t{1} << 20, std::chrono::seconds(60), /*all=*/1));
  constexpr int kPushes = 8;
  std::vector<grpc::ClientContext> contexts(kPushes);
  std::vector<std::unique_ptr<GenericCall>> calls;
  for (int i = 0; i < kPushes; ++i) calls.push_back(BeginPush(&contexts[i], /*chunk=*/true));
  for (auto& call : calls) ASSERT_NO_FATAL_FAILURE(EndPush(call.get()));
  EXPECT_EQ(State(), std::make_pair(3.0f - 0.5f * kPushes, int64_t{kPushes}));
  ASSERT_TRUE(WaitUntil([&] { return streams().held_bytes() == 0; }))
      << streams().held_bytes() << " bytes still held";
}

// A push whose next message does not come within the limit is cancelled,
// whether it was still gathering (its header alone) or a thread had taken
// it (past its gather_bytes), and nothing of it is applied.
TEST_F(GatheringStreams, AStreamIdlePastItsLimitIsCancelledAndAppliesNothing) {
  ASSERT_NO_FATAL_FAILURE(Start(/*gather=*/1024, std::chrono::milliseconds(300)));
  for (const bool chunk : {false, true}) {
    SCOPED_TRACE(chunk ? "taken by a thread" : "gathering");
    const uint64_t cancelled = streams().cancelled();
    const int64_t refused = ps_.core.refused_pushes();
    grpc::ClientContext ctx;
    auto call = BeginPush(&ctx, chunk);
    grpc::ByteBuffer reply;
    EXPECT_FALSE(call->Read(&reply));  // until the ps cancels it
    const grpc::Status s = call->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
    EXPECT_EQ(streams().cancelled(), cancelled + 1);
    // Refused by the core, as a push cut short on any transport is.
    EXPECT_TRUE(WaitUntil([&] { return ps_.core.refused_pushes() == refused + 1; }))
        << ps_.core.refused_pushes() - refused << " refused";
    EXPECT_EQ(State(), std::make_pair(3.0f, int64_t{0}));
  }
  ASSERT_TRUE(WaitUntil([&] { return streams().watched() == 0; }));
  EXPECT_EQ(streams().held_bytes(), 0);
}

}  // namespace
}  // namespace pstrain
