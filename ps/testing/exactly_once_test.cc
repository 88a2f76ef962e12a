// A push whose answer is lost after the ps applied it (the transports'
// fault seam, PsCore::set_drop_push_reply) fails at the worker; sent again
// under its number, it is answered as the first time and applied once:
// over gRPC and over the tensor channel, async and sync, dense gradients
// and embedding rows in the same push, on two real ps servers on loopback.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "cluster/key_partition.h"
#include "core/testing/status_assertions.h"
#include "ps/client/ps_fleet.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace {

struct Case {
  bool channel;  // the tensor channel beside gRPC, or gRPC alone
  bool sync;
};

std::string CaseName(const ::testing::TestParamInfo<Case>& info) {
  return std::string(info.param.channel ? "TensorChannel" : "Grpc") +
         (info.param.sync ? "Sync" : "Async");
}

class ExactlyOnce : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    auto placement = cluster::ComputePlacement(vars_, 2, cluster::PlacementStrategy::kGreedy, 1);
    ASSERT_TRUE(placement.ok()) << placement.status().ToString();
    std::vector<std::unique_ptr<PsConnection>> clients;
    for (int i = 0; i < 2; ++i) {
      const Status s = ps_[i].Start(GetParam().channel ? 0 : -1);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(ps_[i].server->tensor_port() > 0, GetParam().channel);
      ps_[i].client->set_shared_memory(false);
      clients.push_back(std::move(ps_[i].client));
    }
    proto::EmbeddingTableConfig table;
    table.set_name("emb");
    table.set_dim(2);
    table.set_initializer_stddev(0);  // rows start at zero
    fleet_ = std::make_unique<PsFleet>(std::move(clients),
                                       PsFleet::Layout{vars_, *placement, {}, {table}});
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(1.0f);
    header.set_num_workers(1);
    if (GetParam().sync) {
      header.mutable_sync()->set_enabled(true);
      header.mutable_sync()->set_replicas_to_aggregate(1);
      header.mutable_sync()->set_total_num_replicas(1);
    }
    const Status init = fleet_->InitVariables({Tensor({4}), Tensor({3})}, header);
    ASSERT_TRUE(init.ok()) << init.ToString();
    // Keys on both ps tasks.
    std::vector<int64_t> keys;
    for (int64_t k = 0; keys.size() < 4; ++k) {
      if (KeyShard(k, 2) == static_cast<int>(keys.size() % 2)) keys.push_back(k);
    }
    step_.resize(1);
    step_[0].table = "emb";
    step_[0].dim = 2;
    step_[0].ids = Unique(keys.data(), static_cast<int64_t>(keys.size()));
    PS_ASSERT_OK(fleet_->Shard(&step_));
  }

  // Each ps's values after the test: w and b, and emb's rows.
  void ExpectAppliedOnce(int64_t step) {
    std::vector<Tensor> values;
    PsFleet::PsSteps steps;
    const Status pulled = fleet_->PullVariablesAndRows(&values, &step_, &steps);
    ASSERT_TRUE(pulled.ok()) << pulled.ToString();
    EXPECT_EQ(steps[0], step);
    for (const Tensor& v : values) {
      for (int64_t i = 0; i < v.size(); ++i) {
        EXPECT_EQ(v[i], -static_cast<float>(step)) << "a gradient applied " << -v[i] << " times";
      }
    }
    for (int64_t i = 0; i < step_[0].rows.size(); ++i) {
      EXPECT_EQ(step_[0].rows[i], -static_cast<float>(step))
          << "a row applied " << -step_[0].rows[i] << " times";
    }
  }

  const std::vector<cluster::VariableInfo> vars_ = {{"w", {4}, 0}, {"b", {3}, 0}};
  LoopbackPs ps_[2];
  std::unique_ptr<PsFleet> fleet_;
  std::vector<PsFleet::TableStep> step_;
};

TEST_P(ExactlyOnce, APushWhoseAnswerWasLostIsAppliedOnceWhenSentAgain) {
  std::vector<Tensor> grads = {Tensor({4}), Tensor({3})};
  for (Tensor& g : grads) g.Fill(1.0f);
  Tensor rows({4, 2});
  rows.Fill(1.0f);
  // Ps 1 applies the push, and its answer is lost once.
  std::atomic<int> dropped{0};
  ps_[1].core.set_drop_push_reply(
      [&dropped](const proto::PushHeader&) { return dropped.fetch_add(1) == 0; });
  const uint64_t sequence = fleet_->NextPushSequence();
  auto lost = fleet_->PushGradientsAndRows(grads, step_, {rows}, 0, 1, {0, 0}, GetParam().sync);
  ASSERT_FALSE(lost.ok()) << "the fault dropped no answer";
  EXPECT_EQ(lost.status().code(), Code::kUnavailable) << lost.status().ToString();
  EXPECT_EQ(ps_[1].core.repeated_pushes(), 0);
  // Sent again, whole: both ps answered before, neither applies it again.
  auto again =
      fleet_->PushGradientsAndRows(grads, step_, {rows}, 0, 1, {0, 0}, GetParam().sync, sequence);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->sequence, sequence);
  EXPECT_EQ(again->global_step(), 1);
  EXPECT_EQ(ps_[0].core.repeated_pushes(), 1);
  EXPECT_EQ(ps_[1].core.repeated_pushes(), 1);
  ASSERT_NO_FATAL_FAILURE(ExpectAppliedOnce(1));
  // The next push is new, and applied.
  auto next = fleet_->PushGradientsAndRows(grads, step_, {rows}, 0, 2, {1, 1}, GetParam().sync);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_EQ(next->sequence, sequence + 1);
  ASSERT_NO_FATAL_FAILURE(ExpectAppliedOnce(2));
}

// A new incarnation (a restarted worker: another fleet) numbers its pushes
// from 1 again, and they are applied.
TEST_P(ExactlyOnce, ARestartedWorkersPushesAreItsOwn) {
  std::vector<Tensor> grads = {Tensor({4}), Tensor({3})};
  for (Tensor& g : grads) g.Fill(1.0f);
  Tensor rows({4, 2});
  rows.Fill(1.0f);
  auto first = fleet_->PushGradientsAndRows(grads, step_, {rows}, 0, 1, {0, 0}, GetParam().sync);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->sequence, 1u);
  std::vector<std::unique_ptr<PsConnection>> clients;
  for (int i = 0; i < 2; ++i) {
    clients.push_back(
        std::make_unique<PsClient>(i, "127.0.0.1:" + std::to_string(ps_[i].server->port())));
  }
  PsFleet restarted(std::move(clients), PsFleet::Layout{vars_, fleet_->placement(), {}, {}});
  auto second = restarted.PushGradients(grads, 0, 2, {1, 1}, GetParam().sync);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_EQ(second->sequence, 1u);
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(restarted.PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 2);
  EXPECT_EQ(values[0][0], -2.0f);
}

INSTANTIATE_TEST_SUITE_P(Ps, ExactlyOnce,
                         ::testing::Values(Case{false, false}, Case{false, true}, Case{true, false},
                                           Case{true, true}),
                         CaseName);

}  // namespace
}  // namespace pstrain
