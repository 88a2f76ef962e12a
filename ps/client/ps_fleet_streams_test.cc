// StreamedPull and StreamedPush (ps/client/ps_fleet_streams.h) over two ps tasks,
// one variable cut across both: real servers on loopback (their tensors on
// the tensor channel, through shared memory where this machine has it) and
// in-process ones (which ThreadSanitizer can follow: Debian's gRPC is not
// instrumented). The same effect as PullVariables and PushGradients,
// variable by variable, and nothing applied of a push given up; and a
// push that pulls (PushGradientsAndRows' pull_into).
#include "ps/client/ps_fleet_streams.h"

#include <gtest/gtest.h>

#include <cstring>

#include "core/testing/status_assertions.h"
#include "ps/tcp/arena_memory.h"
#include "ps/testing/in_process_ps.h"
#include "ps/testing/loopback_ps.h"

namespace pstrain {
namespace {

// The parameter: real servers on loopback (true) or in process.
class FleetStreams : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    auto placement =
        cluster::ComputePlacement(vars_, 2, cluster::PlacementStrategy::kGreedy, 16 << 10);
    ASSERT_TRUE(placement.ok()) << placement.status().ToString();
    ASSERT_EQ(placement->ShardsOfVariable("a").size(), 2u);  // cut by the 16 KB slice limit
    std::vector<std::unique_ptr<PsConnection>> clients;
    for (int i = 0; i < 2; ++i) {
      if (!GetParam()) {
        clients.push_back(std::make_unique<InProcessPs>(i));
        continue;
      }
      Status s = ps_[i].Start();
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_GT(ps_[i].server->tensor_port(), 0);
    }
    // On loopback, a trainer's arena shared with both ps tasks, as a
    // worker's main makes it (ps/rpc/ps_connections.h).
    std::unique_ptr<TensorMemory> memory;
    if (GetParam()) {
      auto arena = tcp::ArenaMemory::Create(vars_, {true, true});
      for (int i = 0; i < 2; ++i) {
        if (arena.ok()) ps_[i].client->set_arena((*arena)->region());
        clients.push_back(std::move(ps_[i].client));
      }
      arena_made_ = arena.ok();
      if (arena.ok()) memory = std::move(arena).value();
    }
    fleet_ = std::make_unique<PsFleet>(
        std::move(clients), PsFleet::Layout{vars_, *placement, {}, {}}, std::move(memory));
    init_ = {Tensor({1000, 10}), Tensor({7}), Tensor({3, 3})};
    for (Tensor& t : init_) {
      for (int64_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(i % 251) * 0.5f;
    }
    proto::InitHeader header;
    header.mutable_optimizer()->set_name("GradientDescent");
    header.mutable_optimizer()->set_learning_rate(1.0f);
    header.set_num_workers(1);
    const Status init = fleet_->InitVariables(init_, header);
    ASSERT_TRUE(init.ok()) << init.ToString();
  }

  static bool SameBits(const Tensor& a, const Tensor& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
  }

  const std::vector<cluster::VariableInfo> vars_ = {
      {"a", {1000, 10}, 0}, {"b", {7}, 0}, {"c", {3, 3}, 0}};
  LoopbackPs ps_[2];
  bool arena_made_ = false;  // this machine had room for the arena
  std::unique_ptr<PsFleet> fleet_;
  std::vector<Tensor> init_;
};

TEST_P(FleetStreams, APullStreamedVariableByVariableMatchesAWholePull) {
  std::vector<Tensor> streamed;
  auto pull = fleet_->StartPull(&streamed);
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(pull->WaitSteps(&steps));
  EXPECT_EQ(steps, (PsFleet::PsSteps{0, 0}));
  // In any order: each variable is whole once Wait says so.
  for (size_t v : {2, 0, 1}) {
    PS_ASSERT_OK(pull->Wait(v));
    EXPECT_TRUE(SameBits(streamed[v], init_[v])) << vars_[v].name;
  }
  PS_ASSERT_OK(pull->Finish());
  // The buffers go back to the fleet: a second pull reuses them.
  std::vector<Tensor> again;
  PsFleet::PsSteps steps2;
  PS_ASSERT_OK(fleet_->PullVariables(&again, &steps2));
  for (size_t v = 0; v < init_.size(); ++v) EXPECT_TRUE(SameBits(again[v], init_[v]));
}

TEST_P(FleetStreams, AStreamedPushLandsOnEveryShardOnceFinished) {
  std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7}), Tensor({3, 3})};
  for (int64_t i = 0; i < grads[0].size(); ++i) grads[0][i] = static_cast<float>(i % 7);
  grads[1].Fill(2.0f);
  grads[2].Fill(-1.0f);
  auto push = fleet_->StartPush(/*worker=*/0, /*local_step=*/1, {0, 0}, /*sync=*/false);
  for (size_t v : {2, 1, 0}) ASSERT_TRUE(push->Send(v, grads[v]).ok());  // backward order
  auto pushed = push->Finish();
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->global_step(), 1);
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 1);
  for (size_t v = 0; v < init_.size(); ++v) {
    for (int64_t i = 0; i < values[v].size(); ++i) {
      ASSERT_EQ(values[v][i], init_[v][i] - grads[v][i]) << vars_[v].name << " " << i;
    }
  }
}

TEST_P(FleetStreams, AStreamedPushGivenUpAppliesNothingOnAnyPs) {
  std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7}), Tensor({3, 3})};
  for (Tensor& g : grads) g.Fill(1.0f);
  {
    auto push = fleet_->StartPush(0, 1, {0, 0}, false);
    // Every gradient but the last is on its way when the step gives up.
    PS_ASSERT_OK(push->Send(2, grads[2]));
    PS_ASSERT_OK(push->Send(1, grads[1]));
  }
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&values, &steps));
  EXPECT_EQ(steps[0], 0);
  for (size_t v = 0; v < init_.size(); ++v) EXPECT_TRUE(SameBits(values[v], init_[v]));
}

// A gradient of the wrong shape, one sent twice, or a push finished
// without every gradient: refused, and no ps applies any of it, though
// the gradients sent before were already on their way.
TEST_P(FleetStreams, AMalformedStreamedPushAppliesNothingOnAnyPs) {
  std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7}), Tensor({3, 3})};
  for (Tensor& g : grads) g.Fill(1.0f);
  const Tensor wrong({3, 4});
  struct Case {
    std::vector<std::pair<size_t, const Tensor*>> sends;
    std::string why;
  };
  const std::vector<Case> cases = {
      {{{1, &grads[1]}, {2, &wrong}}, "the gradient of c has shape [3,4], the variable [3,3]"},
      {{{1, &grads[1]}, {1, &grads[1]}}, "the gradient of b sent twice"},
      {{{1, &grads[1]}, {3, &grads[1]}}, "a push of variable 3 of 3"},
      {{{2, &grads[2]}, {1, &grads[1]}}, "a push without the gradient of a"}};
  for (const Case& c : cases) {
    auto push = fleet_->StartPush(0, 1, {0, 0}, false);
    for (const auto& [v, grad] : c.sends) (void)push->Send(v, *grad);
    auto pushed = push->Finish();
    ASSERT_FALSE(pushed.ok()) << c.why;
    EXPECT_EQ(pushed.status().code(), Code::kInvalidArgument) << pushed.status().ToString();
    EXPECT_NE(pushed.status().message().find(c.why), std::string::npos)
        << pushed.status().ToString();
  }
  std::vector<Tensor> values;
  PsFleet::PsSteps steps;
  const Status pulled = fleet_->PullVariables(&values, &steps);
  ASSERT_TRUE(pulled.ok()) << pulled.ToString();
  EXPECT_EQ(steps[0], 0);
  for (size_t v = 0; v < init_.size(); ++v) EXPECT_TRUE(SameBits(values[v], init_[v]));
}

// A ps to stop: the real servers only.
class FleetStreamsOnLoopback : public FleetStreams {};

TEST_P(FleetStreamsOnLoopback, APullFromAStoppedPsFailsItsVariablesWait) {
  ps_[1].server->Stop();
  std::vector<Tensor> values;
  auto pull = fleet_->StartPull(&values);
  PsFleet::PsSteps steps;
  const Status s = pull->WaitSteps(&steps);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kUnavailable) << s.ToString();
  PS_EXPECT_CODE(pull->Finish(), Code::kUnavailable);
}

// A trainer's tensors in the arena (ps tasks on this host): pulls land in
// them where they lie; room given back is handed out again, but never
// room retired after a failed transfer (a ps may still be at it).
TEST_P(FleetStreamsOnLoopback, ArenaTensorsArePulledInPlaceAndRetiredRoomStaysOut) {
  std::vector<Tensor> first = fleet_->VariableBuffers();
  if (first[0].owns_data()) GTEST_SKIP() << "no arena: no memory files here";
  EXPECT_FALSE(first[0].borrows_data());
  std::vector<float*> rooms;
  for (Tensor& t : first) rooms.push_back(t.data());
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&first, &steps));
  for (size_t v = 0; v < init_.size(); ++v) EXPECT_TRUE(SameBits(first[v], init_[v]));
  // "a" is cut across both ps and received in place; the whole ones trade
  // places with the fleet's buffers, in the arena too.
  EXPECT_EQ(first[0].data(), rooms[0]);
  EXPECT_FALSE(first[1].owns_data());

  const float* room = first[0].data();
  first.clear();
  std::vector<Tensor> again = fleet_->VariableBuffers();
  EXPECT_EQ(again[0].data(), room);  // given back, handed out again
  fleet_->Retire(std::move(again));
  std::vector<Tensor> after = fleet_->VariableBuffers();
  EXPECT_NE(after[0].data(), room);
}

// A push that pulls into memory one ps cannot reach (b outside the
// arena): that ps writes nothing, so the push did not pull, though the
// other ps wrote its part; the caller pulls, and each ps applied the
// push once.
TEST_P(FleetStreamsOnLoopback, APushThatPullsIntoMemoryOnePsCannotReachDidNotPull) {
  std::vector<Tensor> values = fleet_->VariableBuffers();
  if (values[0].owns_data()) GTEST_SKIP() << "no arena: no memory files here";
  values[1] = Tensor({7});  // ordinary memory
  std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7}), Tensor({3, 3})};
  for (Tensor& g : grads) g.Fill(1.0f);
  auto pushed = fleet_->PushGradientsAndRows(grads, {}, {}, 0, 1, {0, 0}, false, 0, &values);
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_FALSE(pushed->values_pulled);
  std::vector<Tensor> pulled;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&pulled, &steps));
  for (size_t v = 0; v < init_.size(); ++v) {
    for (int64_t i = 0; i < pulled[v].size(); ++i) {
      ASSERT_EQ(pulled[v][i], init_[v][i] - 1.0f) << vars_[v].name << " " << i;
    }
  }
}

std::string PsKind(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "OnLoopback" : "InProcess";
}

INSTANTIATE_TEST_SUITE_P(Ps, FleetStreams, ::testing::Values(true, false), PsKind);
// A push that pulls: on loopback, where the variables lie in the arena
// both ps tasks map, each ps writes its variables (a's two shards too) as
// they are after the push, with each ps's step: what a pull would give.
// Sent again under its number (its answer lost), it is applied once and
// writes nothing. In process there is no arena: nothing is written, and
// the caller pulls.
TEST_P(FleetStreams, APushThatPullsWritesTheValuesAfterItWhereTheArenaHoldsThem) {
  std::vector<Tensor> grads = {Tensor({1000, 10}), Tensor({7}), Tensor({3, 3})};
  for (int64_t i = 0; i < grads[0].size(); ++i) grads[0][i] = static_cast<float>(i % 7);
  grads[1].Fill(2.0f);
  grads[2].Fill(-1.0f);
  std::vector<Tensor> values = fleet_->VariableBuffers();
  for (Tensor& v : values) v.Fill(-7.0f);
  const uint64_t sequence = fleet_->NextPushSequence();
  auto pushed = fleet_->PushGradientsAndRows(grads, {}, {}, /*worker=*/0, /*local_step=*/1, {0, 0},
                                             /*sync=*/false, sequence, &values);
  ASSERT_TRUE(pushed.ok()) << pushed.status().ToString();
  EXPECT_EQ(pushed->global_step(), 1);
  std::vector<Tensor> pulled;
  PsFleet::PsSteps steps;
  PS_ASSERT_OK(fleet_->PullVariables(&pulled, &steps));
  EXPECT_EQ(pushed->steps, steps);
  const bool written = GetParam() && arena_made_;
  EXPECT_EQ(pushed->values_pulled, written);
  for (size_t v = 0; v < init_.size(); ++v) {
    for (int64_t i = 0; i < pulled[v].size(); ++i) {
      ASSERT_EQ(pulled[v][i], init_[v][i] - grads[v][i]) << vars_[v].name << " " << i;
    }
    if (written) {
      EXPECT_TRUE(SameBits(values[v], pulled[v])) << vars_[v].name;
    } else {
      for (int64_t i = 0; i < values[v].size(); ++i) ASSERT_EQ(values[v][i], -7.0f);
    }
  }

  for (Tensor& v : values) v.Fill(-7.0f);
  auto again = fleet_->PushGradientsAndRows(grads, {}, {}, 0, 1, {0, 0}, false, sequence, &values);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->values_pulled);
  EXPECT_EQ(again->global_step(), 1);
  for (const Tensor& v : values) {
    for (int64_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], -7.0f);
  }
  PS_ASSERT_OK(fleet_->PullVariables(&pulled, &steps));
  EXPECT_EQ(pulled[1][0], init_[1][0] - grads[1][0]);  // applied once
}

INSTANTIATE_TEST_SUITE_P(Ps, FleetStreamsOnLoopback, ::testing::Values(true), PsKind);

}  // namespace
}  // namespace pstrain
