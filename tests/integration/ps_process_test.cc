// Real ps_server processes on loopback: pushes from many threads land
// exactly, tensors are stitched across partitions, a malformed spec is
// refused, and a Shutdown ends the process with exit code 0, even while a
// client has stopped reading a pull.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <thread>

#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "ps/client/ps_fleet.h"
#include "ps/rpc/generic_call.h"
#include "ps/rpc/grpc_options.h"
#include "ps/rpc/ps_client.h"
#include "ps/rpc/ps_connections.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;
using testing::RunningTask;

std::vector<std::string> PsArgv(const std::string& spec, int index) {
  return {BuildDir() + "/ps/ps_server", "--cluster_spec=" + spec, "--job=ps",
          "--task=" + std::to_string(index)};
}

TEST(PsProcess, ConcurrentPushesLandExactlyAcrossPartitions) {
  testing::TempDir dir("ps_process");
  auto spec = testing::MakeLocalSpec(dir.path(), 2, 0);
  RunningTask ps0("ps:0", PsArgv(spec.path, 0)), ps1("ps:1", PsArgv(spec.path, 1));

  // "a" (1000x10 floats) is cut into 2 parts by the 16 KB slice limit.
  std::vector<cluster::VariableInfo> vars = {{"a", {1000, 10}, 0}, {"b", {7}, 0}};
  auto placement =
      cluster::ComputePlacement(vars, 2, cluster::PlacementStrategy::kGreedy, 16 << 10);
  PS_ASSERT_OK(placement);
  ASSERT_EQ(placement->ShardsOfVariable("a").size(), 2u);
  PsClientOptions options;
  options.chunk_bytes = 4096;
  std::unique_ptr<PsFleet> connected = ConnectFleet(spec.spec, {vars, *placement, {}, {}}, options);
  PsFleet& fleet = *connected;
  PS_ASSERT_OK(fleet.WaitForPs(false, nullptr, std::chrono::seconds(30)));

  std::vector<Tensor> init = {Tensor({1000, 10}), Tensor({7})};
  for (int64_t i = 0; i < init[0].size(); ++i) init[0][i] = static_cast<float>(i);
  proto::OptimizerConfig sgd;
  sgd.set_name("GradientDescent");
  sgd.set_learning_rate(0.5f);
  proto::InitHeader header;
  *header.mutable_optimizer() = sgd;
  PS_ASSERT_OK(fleet.InitVariables(init, header));

  // 4 threads x 25 pushes; each gradient is 1 everywhere for "a" and the
  // thread's number for "b". Every value is exact in float.
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::unique_ptr<PsFleet> mine = ConnectFleet(spec.spec, {vars, *placement, {}, {}}, options);
      std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7})};
      grads[0].Fill(1.0f);
      grads[1].Fill(static_cast<float>(t + 1));
      const PsFleet::PsSteps pulled = {0, 0};
      for (int i = 0; i < 25; ++i) {
        PS_ASSERT_OK(mine->PushGradients(grads, t, i + 1, pulled, /*sync=*/false));
      }
    });
  }
  for (auto& th : threads) th.join();

  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet.PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 100);
  for (int64_t i = 0; i < values[0].size(); ++i) {
    ASSERT_EQ(values[0][i], static_cast<float>(i) - 50.0f) << i;  // 100 pushes x 0.5 x 1
  }
  for (int64_t i = 0; i < 7; ++i) {
    ASSERT_EQ(values[1][i], -0.5f * 25 * (1 + 2 + 3 + 4));
  }

  PS_ASSERT_OK(fleet.ShutdownAll("test done"));
  ASSERT_TRUE(ps0.WaitForExit(std::chrono::seconds(20)));
  ASSERT_TRUE(ps1.WaitForExit(std::chrono::seconds(20)));
  EXPECT_TRUE(ps0.process()->succeeded()) << ps0.process()->exit_description() << ps0.output();
  EXPECT_TRUE(ps1.process()->succeeded()) << ps1.process()->exit_description();
  EXPECT_NE(ps0.output().find("shutting down: test done"), std::string::npos) << ps0.output();
}

TEST(PsProcess, MalformedSpecExitsTwoWithOneLine) {
  testing::TempDir dir("ps_badspec");
  const std::string bad = dir.path() + "/bad.json";
  std::ofstream(bad) << "{\"ps\": [\"127.0.0.1:1\", \"127.0.0.1:1\"]}";
  std::string out;
  EXPECT_EQ(testing::RunToCompletion(PsArgv(bad, 0), std::chrono::seconds(20), &out),
            "exit code 2");
  EXPECT_NE(out.find("duplicate address"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

// An evicted ps (SIGTERM before the chief's shutdown) exits 143, retryable,
// so that Kubernetes recreates its pod: the job needs it back.
TEST(PsProcess, SigtermBeforeTheChiefsShutdownExits143) {
  testing::TempDir dir("ps_sigterm");
  auto spec = testing::MakeLocalSpec(dir.path(), 1, 0);
  RunningTask ps0("ps:0", PsArgv(spec.path, 0));
  PsClient client(0, spec.spec.Address("ps", 0));
  ASSERT_TRUE(WaitUntil([&] { return client.GetStatus(std::chrono::seconds(1)).ok(); },
                        std::chrono::seconds(60), std::chrono::milliseconds(100)))
      << ps0.output();
  ps0.process()->Signal(SIGTERM);
  ASSERT_TRUE(ps0.WaitForExit(std::chrono::seconds(20)));
  EXPECT_EQ(ps0.process()->exit_description(), "exit code 143") << ps0.output();
  EXPECT_NE(ps0.output().find("shutting down: signal Terminated"), std::string::npos)
      << ps0.output();
}

// A client that stops reading a pull (a worker cut off mid-transfer) does
// not keep the ps from exiting when the job ends: the ps never waits on the
// network for memory it lent to gRPC.
TEST(PsProcess, ExitsWhileAPullIsLeftUnread) {
  testing::TempDir dir("ps_unread_pull");
  auto spec = testing::MakeLocalSpec(dir.path(), 1, 0);
  RunningTask ps0("ps:0", PsArgv(spec.path, 0));
  // 16 MB: far more than gRPC's flow-control window holds unread.
  std::vector<cluster::VariableInfo> vars = {{"a", {4096, 1024}, 0}};
  auto placement =
      cluster::ComputePlacement(vars, 1, cluster::PlacementStrategy::kGreedy, 64 << 20);
  PS_ASSERT_OK(placement);
  std::unique_ptr<PsFleet> fleet = ConnectFleet(spec.spec, {vars, *placement, {}, {}});
  PS_ASSERT_OK(fleet->WaitForPs(false, nullptr, std::chrono::seconds(30)));
  proto::InitHeader header;
  header.mutable_optimizer()->set_name("GradientDescent");
  header.mutable_optimizer()->set_learning_rate(0.5f);
  PS_ASSERT_OK(fleet->InitVariables({Tensor({4096, 1024})}, header));

  grpc::GenericStub stub(grpc::CreateCustomChannel(
      spec.spec.Address("ps", 0), grpc::InsecureChannelCredentials(), DefaultChannelArguments()));
  grpc::ClientContext ctx;
  GenericCall pull(&stub, &ctx, "/pstrain.proto.Ps/Pull");
  proto::PullRequest request;
  request.set_placement_fingerprint(placement->fingerprint);
  request.set_chunk_bytes(1 << 20);
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  grpc::SerializationTraits<proto::PullRequest>::Serialize(request, &bytes, &own_buffer);
  ASSERT_TRUE(pull.Write(bytes) && pull.WritesDone());
  ASSERT_TRUE(pull.Read(&bytes));  // the first chunk, and no more

  PS_ASSERT_OK(fleet->ShutdownAll("test done"));
  EXPECT_TRUE(ps0.WaitForExit(std::chrono::seconds(30))) << ps0.output();
  EXPECT_TRUE(ps0.process()->succeeded()) << ps0.process()->exit_description() << ps0.output();
  ctx.TryCancel();
  // The ps gone, or the call cancelled first: either way not a refusal.
  const grpc::Status finished = pull.Finish();
  EXPECT_TRUE(finished.error_code() == grpc::StatusCode::UNAVAILABLE ||
              finished.error_code() == grpc::StatusCode::CANCELLED)
      << finished.error_code() << ": " << finished.error_message();
}

}  // namespace
}  // namespace pstrain
