#include "chief/evaluation_thread.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sched.h>

#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/testing/wait_until.h"
#include "core/thread_priority.h"
#include "nn/model_spec.h"
#include "nn/test_models.h"

namespace pstrain {
namespace {

class EvaluationThreadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto* model : {&model_, &thread_model_}) {
      auto spec = nn::ParseModelSpec(nn::TinyLinearNetText(0.5f), "the tiny net");
      PS_ASSERT_OK(spec);
      auto created = nn::CreateModel(*spec);
      PS_ASSERT_OK(created);
      *model = std::move(created).value();
    }
    std::mt19937 rng(3);
    test_set_.count = 3000;
    test_set_.rows = test_set_.cols = 4;
    test_set_.pixels.resize(test_set_.count * 16);
    for (uint8_t& p : test_set_.pixels) p = static_cast<uint8_t>(rng() % 256);
    for (int i = 0; i < test_set_.count; ++i) {
      test_set_.labels.push_back(static_cast<int32_t>(rng() % 10));
    }
    std::normal_distribution<float> normal;
    for (const nn::VariableSpec& v : model_->variables()) {
      Tensor t(v.shape);
      for (int64_t i = 0; i < t.size(); ++i) t.data()[i] = normal(rng);
      state_[v.name] = t;
    }
  }

  StateEvaluation Evaluation(nn::Model* model) const {
    return StateEvaluation{model, nullptr, &test_set_, nullptr, {}, false};
  }

  std::unique_ptr<nn::Model> model_, thread_model_;
  data::ImageDataset test_set_;
  PsFleet::State state_;
};

// How many of this process's threads run at SCHED_IDLE.
int ThreadsAtIdlePriority() {
  int idle = 0;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    idle += sched_getscheduler(static_cast<pid_t>(std::stol(e->d_name))) == SCHED_IDLE;
  }
  closedir(dir);
  return idle;
}

// What the thread finds is what the caller's thread finds on the same
// state, with the step and time of the state it was given; a second Start
// before the outcome is taken starts nothing.
TEST_F(EvaluationThreadTest, GivesTheOutcomeOfTheStateItWasGivenOnce) {
  auto expected = Evaluation(model_.get()).Evaluate(state_);
  PS_ASSERT_OK(expected);
  EvaluationThread thread(Evaluation(thread_model_.get()), /*compute_threads=*/1, /*idle=*/false);
  EXPECT_FALSE(thread.busy());
  ASSERT_TRUE(thread.Start(42, 12.5, state_));
  EXPECT_TRUE(thread.busy());
  EXPECT_FALSE(thread.Start(43, 13.0, state_));
  std::optional<EvaluationThread::Outcome> done;
  ASSERT_TRUE(WaitUntil([&] { return (done = thread.Take()).has_value(); }));
  EXPECT_EQ(done->step, 42);
  EXPECT_EQ(done->training_secs, 12.5);
  PS_ASSERT_OK(done->result);
  EXPECT_EQ(done->result->examples, 3000);
  EXPECT_EQ(done->result->correct, expected->correct);
  EXPECT_FALSE(thread.Take().has_value());
  EXPECT_FALSE(thread.busy());
  EXPECT_TRUE(thread.Start(43, 13.0, state_));
}

// Beside workers that take every CPU the evaluation runs at idle priority:
// its thread and the compute threads it starts, and no other thread of the
// process.
TEST_F(EvaluationThreadTest, RunsAtIdlePriorityAndTheRestOfTheProcessDoesNot) {
  ASSERT_EQ(ThreadsAtIdlePriority(), 0);
  {
    EvaluationThread thread(Evaluation(thread_model_.get()), /*compute_threads=*/2, /*idle=*/true);
    ASSERT_TRUE(thread.Start(1, 1.0, state_));
    std::optional<EvaluationThread::Outcome> done;
    ASSERT_TRUE(WaitUntil([&] { return (done = thread.Take()).has_value(); }));
    PS_EXPECT_OK(done->result);
    // The evaluation thread and its pool's second thread.
    EXPECT_EQ(ThreadsAtIdlePriority(), 2);
    EXPECT_FALSE(ThisThreadRunsAtIdlePriority());
  }
}

// Cancel leaves an evaluation between two batches and drops its outcome;
// the thread then evaluates the next state given.
TEST_F(EvaluationThreadTest, CancelDropsTheEvaluationUnderWay) {
  EvaluationThread thread(Evaluation(thread_model_.get()), /*compute_threads=*/1, /*idle=*/false);
  ASSERT_TRUE(thread.Start(1, 1.0, state_));
  thread.Cancel();
  EXPECT_FALSE(thread.busy());
  EXPECT_FALSE(thread.Take().has_value());
  ASSERT_TRUE(thread.Start(2, 2.0, state_));
  std::optional<EvaluationThread::Outcome> done;
  ASSERT_TRUE(WaitUntil([&] { return (done = thread.Take()).has_value(); }));
  EXPECT_EQ(done->step, 2);
  PS_EXPECT_OK(done->result);
}

// With room for 2 to wait, three states are taken while the first is
// evaluated, a fourth is refused, and the outcomes come in the order of the
// states, each of its own step and time.
TEST_F(EvaluationThreadTest, StatesWaitTheirTurnAndOutcomesComeInOrder) {
  EvaluationThread thread(Evaluation(thread_model_.get()), /*compute_threads=*/1, /*idle=*/false,
                          /*max_waiting=*/2);
  for (int step = 1; step <= 3; ++step) ASSERT_TRUE(thread.Start(step, step * 10.0, state_));
  EXPECT_TRUE(thread.full());
  EXPECT_FALSE(thread.Start(4, 40.0, state_));
  for (int step = 1; step <= 3; ++step) {
    std::optional<EvaluationThread::Outcome> done = thread.WaitAndTake();
    ASSERT_TRUE(done.has_value()) << "outcome " << step;
    EXPECT_EQ(done->step, step);
    EXPECT_EQ(done->training_secs, step * 10.0);
    PS_EXPECT_OK(done->result);
  }
  EXPECT_FALSE(thread.WaitAndTake().has_value());
  EXPECT_FALSE(thread.busy());
  EXPECT_FALSE(thread.full());
}

// Cancel drops the states that wait as well as the one under way.
TEST_F(EvaluationThreadTest, CancelDropsTheWaitingStates) {
  EvaluationThread thread(Evaluation(thread_model_.get()), /*compute_threads=*/1, /*idle=*/false,
                          /*max_waiting=*/2);
  for (int step = 1; step <= 3; ++step) ASSERT_TRUE(thread.Start(step, step * 10.0, state_));
  thread.Cancel();
  EXPECT_FALSE(thread.busy());
  EXPECT_FALSE(thread.Take().has_value());
}

// States wait up to 512 MiB (3 copies of the variables each), 16 at most; a
// model of ids reads its rows from the ps tasks as it is evaluated, so its
// states wait for none.
TEST(EvaluationThreadWaiting, DependsOnTheModelsSize) {
  for (const auto& [name, want] :
       std::vector<std::pair<std::string, int>>{{"mnist", 13}, {"cifar10", 16}, {"mnist_ids", 0}}) {
    auto spec = nn::LoadModelSpec(name);
    PS_ASSERT_OK(spec);
    auto model = nn::CreateModel(*spec);
    PS_ASSERT_OK(model);
    EXPECT_EQ(EvaluationThread::MaxWaitingFor(**model), want) << name;
  }
}

}  // namespace
}  // namespace pstrain
