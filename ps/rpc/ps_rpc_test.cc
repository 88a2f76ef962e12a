// The Ps protocol end to end over real gRPC on loopback (port 0).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "core/testing/status_assertions.h"
#include "ps/tensor_chunks.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace {

class PsRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Status s = ps_.Start();
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  proto::InitHeader Header(const std::vector<std::string>& names, const std::string& opt) {
    proto::InitHeader h;
    h.set_placement_fingerprint(42);
    h.mutable_optimizer()->set_name(opt);
    h.mutable_optimizer()->set_learning_rate(0.5f);
    h.mutable_optimizer()->set_momentum(0.9f);
    for (const auto& n : names) h.add_variables(n);
    h.set_holds_global_step(true);
    h.set_global_step(10);
    return h;
  }

  LoopbackPs ps_;
};

TEST_F(PsRpcTest, InitPushPullHoldsExactlyWhatThePushesImply) {
  Tensor w({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b({3}, {0, 0, 0});
  PS_ASSERT_OK(ps_.client->Init(Header({"w", "b"}, "Momentum"), {{"w", &w}, {"b", &b}}));

  proto::PushHeader ph;
  ph.set_placement_fingerprint(42);
  ph.set_increment_global_step(true);
  Tensor gw({2, 3}, {1, 1, 1, 1, 1, 1});
  auto step = ps_.client->Push(ph, {{"w", &gw}});
  ASSERT_TRUE(step.ok()) << step.status().ToString();
  EXPECT_EQ(step->global_step(), 11);
  EXPECT_EQ(step->outcome(), proto::APPLIED);
  step = ps_.client->Push(ph, {{"w", &gw}});
  PS_ASSERT_OK(step);
  EXPECT_EQ(step->global_step(), 12);

  std::map<std::string, Tensor> out;
  int64_t gs = 0;
  PS_ASSERT_OK(ps_.client->Pull(42, {}, &out, &gs));
  EXPECT_EQ(gs, 12);
  ASSERT_EQ(out.size(), 2u);
  // momentum: accum 1 then 1.9; var -= 0.5*1 then 0.5*1.9: 1 - 0.5 - 0.95
  EXPECT_FLOAT_EQ(out["w"][0], 1.0f - 0.5f - 0.95f);
  EXPECT_FLOAT_EQ(out["w"][5], 6.0f - 0.5f - 0.95f);
  EXPECT_FLOAT_EQ(out["b"][1], 0.0f);

  auto status = ps_.client->GetStatus(std::chrono::seconds(5));
  PS_ASSERT_OK(status);
  EXPECT_TRUE(status->ready());
  EXPECT_EQ(status->num_variables(), 2);
  EXPECT_EQ(status->incarnation(), ps_.server->incarnation());
}

// Init's non_trainable shards reach the store: their pushes are deltas.
TEST_F(PsRpcTest, NonTrainableShardsTakeAssignSub) {
  Tensor w({2}, {1, 2});
  Tensor mm({2}, {1, 2});
  proto::InitHeader h = Header({"w", "bn/moving_mean"}, "Momentum");
  h.add_non_trainable("bn/moving_mean");
  PS_ASSERT_OK(ps_.client->Init(h, {{"w", &w}, {"bn/moving_mean", &mm}}));
  proto::PushHeader ph;
  ph.set_placement_fingerprint(42);
  Tensor delta({2}, {0.5f, -1.0f});
  PS_ASSERT_OK(ps_.client->Push(ph, {{"w", &delta}, {"bn/moving_mean", &delta}}));
  std::map<std::string, Tensor> out;
  PS_ASSERT_OK(ps_.client->Pull(42, {}, &out, nullptr));
  EXPECT_FLOAT_EQ(out["bn/moving_mean"][0], 0.5f);
  EXPECT_FLOAT_EQ(out["bn/moving_mean"][1], 3.0f);
  EXPECT_FLOAT_EQ(out["w"][0], 1.0f - 0.5f * 0.5f);  // the optimizer, lr 0.5
}

TEST_F(PsRpcTest, RefusesAnotherPlacement) {
  Tensor w({2}, {1, 2});
  PS_ASSERT_OK(ps_.client->Init(Header({"w"}, "GradientDescent"), {{"w", &w}}));
  std::map<std::string, Tensor> out;
  Status s = ps_.client->Pull(43, {}, &out, nullptr);
  EXPECT_EQ(s.code(), Code::kFailedPrecondition);
  EXPECT_NE(s.message().find("placement mismatch"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("ps:0"), std::string::npos) << s.message();
}

TEST_F(PsRpcTest, RejectsMalformedInitAndPush) {
  Tensor w({2}, {1, 2});
  // Declared but never sent.
  Status s = ps_.client->Init(Header({"w", "missing"}, "GradientDescent"), {{"w", &w}});
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("missing"), std::string::npos);
  EXPECT_FALSE(ps_.client->GetStatus(std::chrono::seconds(5))->ready());

  PS_ASSERT_OK(ps_.client->Init(Header({"w"}, "GradientDescent"), {{"w", &w}}));
  proto::PushHeader ph;
  ph.set_placement_fingerprint(42);
  Tensor wrong({3});
  EXPECT_EQ(ps_.client->Push(ph, {{"w", &wrong}}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ps_.client->Push(ph, {{"nope", &w}}).status().code(), Code::kNotFound);
}

// A worker killed in the middle of a push leaves a stream that ends early:
// what did arrive must not be applied, nor global_step counted.
TEST_F(PsRpcTest, PushStreamEndingShortOfItsGradientsAppliesNothing) {
  Tensor w({2}, {1, 2});
  Tensor b({1}, {5});
  PS_ASSERT_OK(ps_.client->Init(Header({"w", "b"}, "GradientDescent"), {{"w", &w}, {"b", &b}}));

  auto stub = proto::Ps::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(ps_.server->port()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  proto::PushResponse response;
  auto writer = stub->Push(&ctx, &response);
  proto::PushRequest request;
  request.mutable_header()->set_placement_fingerprint(42);
  request.mutable_header()->set_increment_global_step(true);
  request.mutable_header()->set_num_tensors(2);
  ASSERT_TRUE(writer->Write(request));
  Tensor gw({2}, {1, 1});
  ForEachChunk("w", gw, 0, request.mutable_chunk(), [&] { return writer->Write(request); });
  writer->WritesDone();
  grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("sent 1 of 2 gradients; nothing applied"),
            std::string::npos)
      << status.error_message();

  std::map<std::string, Tensor> out;
  int64_t gs = 0;
  PS_ASSERT_OK(ps_.client->Pull(42, {}, &out, &gs));
  EXPECT_EQ(gs, 10);
  EXPECT_EQ(out["w"][0], 1.0f);
  EXPECT_EQ(out["w"][1], 2.0f);
}

TEST_F(PsRpcTest, EndTrainingReachesEveryLaterHeartbeat) {
  Tensor w({2}, {1, 2});
  proto::InitHeader header = Header({"w"}, "GradientDescent");
  header.set_num_workers(2);
  PS_ASSERT_OK(ps_.client->Init(header, {{"w", &w}}));
  auto beat = ps_.client->Heartbeat(1, 3, 0.5f);
  ASSERT_TRUE(beat.ok()) << beat.status().ToString();
  EXPECT_EQ(beat->training_ended(), "");

  EXPECT_EQ(ps_.client->EndTraining("").code(), Code::kInvalidArgument);
  EXPECT_EQ(ps_.client->EndTraining(std::string(1025, 'x')).code(), Code::kInvalidArgument);
  EXPECT_EQ(ps_.client->Heartbeat(0, 3, 0.5f)->training_ended(), "");  // refusals change nothing

  PS_ASSERT_OK(ps_.client->EndTraining("target reached"));
  PS_ASSERT_OK(ps_.client->EndTraining("said again"));  // the first reason stays
  EXPECT_EQ(ps_.client->Heartbeat(0, 4, 0.4f)->training_ended(), "target reached");
  EXPECT_EQ(ps_.client->Heartbeat(1, 4, 0.4f)->training_ended(), "target reached");
  EXPECT_EQ(ps_.client->GetStatus(std::chrono::seconds(5))->training_ended(), "target reached");
}

// What a task polling for readiness asks leaves out the registry's workers,
// which grow with the job; the rest is the same as GetStatus's.
TEST_F(PsRpcTest, ReadinessLeavesOutTheWorkers) {
  Tensor w({2}, {1, 2});
  proto::InitHeader header = Header({"w"}, "GradientDescent");
  header.set_num_workers(3);
  PS_ASSERT_OK(ps_.client->Init(header, {{"w", &w}}));
  PS_ASSERT_OK(ps_.client->Heartbeat(0, 3, 0.5f));
  PS_ASSERT_OK(ps_.client->Heartbeat(2, 3, 0.5f));
  PS_ASSERT_OK(ps_.client->WorkerDone(2, ""));
  auto full = ps_.client->GetStatus(std::chrono::seconds(5));
  auto readiness = ps_.client->GetReadiness(std::chrono::seconds(5));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  ASSERT_TRUE(readiness.ok()) << readiness.status().ToString();
  EXPECT_EQ(full->workers_size(), 2);
  EXPECT_EQ(full->done_workers_size(), 1);
  EXPECT_EQ(readiness->workers_size(), 0);
  EXPECT_EQ(readiness->done_workers_size(), 0);
  EXPECT_TRUE(readiness->ready());
  EXPECT_EQ(readiness->incarnation(), full->incarnation());
  EXPECT_EQ(readiness->placement_fingerprint(), full->placement_fingerprint());
  EXPECT_EQ(readiness->tensor_port(), full->tensor_port());
}

TEST_F(PsRpcTest, ShutdownRpcNotifiesTheOwner) {
  EXPECT_FALSE(ps_.shutdown_requested.requested());
  PS_ASSERT_OK(ps_.client->Shutdown("test over"));
  EXPECT_TRUE(ps_.shutdown_requested.WaitFor(std::chrono::seconds(5)));
  EXPECT_EQ(ps_.shutdown_requested.reason(), "test over");
  ps_.server->Stop();
  ps_.server->Stop();  // idempotent
  // GetStatus waits for a ps to come (back) up, until its deadline.
  EXPECT_EQ(ps_.client->GetStatus(std::chrono::milliseconds(500)).status().code(),
            Code::kDeadlineExceeded);
}

// A 300 MB variable crosses Init, Push and Pull although gRPC's default
// message limit is 4 MB: it travels in chunks.
TEST_F(PsRpcTest, ThreeHundredMegabyteVariableTravelsInChunks) {
  const int64_t n = 300ll * 1000 * 1000 / 4;
  Tensor big({n / 1000, 1000});
  for (int64_t i = 0; i < big.size(); i += 4099) big[i] = static_cast<float>(i % 977);
  PS_ASSERT_OK(ps_.client->Init(Header({"big"}, "GradientDescent"), {{"big", &big}}));
  Tensor grad({n / 1000, 1000});
  grad.Fill(2.0f);  // lr 0.5: every element goes down by exactly 1
  proto::PushHeader ph;
  ph.set_placement_fingerprint(42);
  PS_ASSERT_OK(ps_.client->Push(ph, {{"big", &grad}}));
  std::map<std::string, Tensor> out;
  PS_ASSERT_OK(ps_.client->Pull(42, {"big"}, &out, nullptr));
  const Tensor& back = out["big"];
  ASSERT_EQ(back.shape(), big.shape());
  for (int64_t i = 0; i < n; i += 4099) ASSERT_EQ(back[i], big[i] - 1.0f) << i;
  EXPECT_EQ(back[n - 1], big[n - 1] - 1.0f);
}

}  // namespace
}  // namespace pstrain
