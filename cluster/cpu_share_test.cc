#include "cluster/cpu_share.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>
#include <sched.h>

#include "core/test_util.h"

namespace pstrain {
namespace cluster {
namespace {

TEST(CpuShare, ParsesCgroupV2CpuMax) {
  EXPECT_EQ(*ParseCgroupV2CpuMax("max 100000\n"), 0.0);
  EXPECT_EQ(*ParseCgroupV2CpuMax("150000 100000\n"), 1.5);
  EXPECT_EQ(*ParseCgroupV2CpuMax("200000 100000"), 2.0);
  for (const char* bad : {"", "max", "abc 100000", "100000 0", "-5 100000", "1 2 3", "1.5 10"}) {
    EXPECT_EQ(ParseCgroupV2CpuMax(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(CpuShare, ParsesCgroupV1Quota) {
  EXPECT_EQ(*ParseCgroupV1Quota("-1\n", "100000\n"), 0.0);
  EXPECT_EQ(*ParseCgroupV1Quota("50000\n", "100000\n"), 0.5);
  PS_EXPECT_CODE(ParseCgroupV1Quota("0", "100000"), Code::kInvalidArgument);
  PS_EXPECT_CODE(ParseCgroupV1Quota("x", "100000"), Code::kInvalidArgument);
  PS_EXPECT_CODE(ParseCgroupV1Quota("50000", "0"), Code::kInvalidArgument);
}

TEST(CpuShare, UsableIsTheAffinityCappedByTheQuotaRoundedUp) {
  EXPECT_EQ((CpuBudget{8, 1.5}).Usable(), 2);
  EXPECT_EQ((CpuBudget{8, 0}).Usable(), 8);
  EXPECT_EQ((CpuBudget{8, 0.3}).Usable(), 1);
  EXPECT_EQ((CpuBudget{2, 4}).Usable(), 2);
  EXPECT_EQ((CpuBudget{0, 0}).Usable(), 1);
}

int OwnAffinity() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST(CpuShare, ReadsTheQuotaOfCgroupV2AndV1) {
  test_util::TempDir v2, v1, none;
  test_util::WriteBytes(v2.path() + "/cpu.max", "150000 100000\n");
  CpuBudget b = ReadCpuBudget(v2.path());
  EXPECT_EQ(b.quota_cpus, 1.5);
  EXPECT_EQ(b.affinity_cpus, OwnAffinity());

  std::filesystem::create_directories(v1.path() + "/cpu");
  test_util::WriteBytes(v1.path() + "/cpu/cpu.cfs_quota_us", "300000\n");
  test_util::WriteBytes(v1.path() + "/cpu/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(ReadCpuBudget(v1.path()).quota_cpus, 3.0);

  EXPECT_EQ(ReadCpuBudget(none.path()).quota_cpus, 0.0);
  test_util::WriteBytes(none.path() + "/cpu.max", "garbage\n");
  EXPECT_EQ(ReadCpuBudget(none.path()).quota_cpus, 0.0);
}

TEST(CpuShare, HostOfFoldsTheLoopbackNames) {
  EXPECT_EQ(HostOf("127.0.0.1:80"), "localhost");
  EXPECT_EQ(HostOf("127.0.1.1:80"), "localhost");
  EXPECT_EQ(HostOf("localhost:5"), "localhost");
  EXPECT_EQ(HostOf("[::1]:80"), "localhost");
  EXPECT_EQ(HostOf("job-worker-0.ns.svc:2222"), "job-worker-0.ns.svc");
  EXPECT_EQ(HostOf("[fe80::1]:9"), "fe80::1");
}

ClusterSpec Spec(std::vector<std::string> workers) {
  ClusterSpec spec;
  spec.jobs["chief"] = {"127.0.0.1:1"};
  spec.jobs["ps"] = {"127.0.0.1:2", "10.0.0.9:2"};
  spec.jobs["worker"] = std::move(workers);
  return spec;
}

TEST(CpuShare, CountsTheWorkersOnTheTasksHost) {
  const ClusterSpec local = Spec({"127.0.0.1:3", "localhost:4"});
  EXPECT_EQ(WorkersOnHostOf(local, {"worker", 0}), 2);
  EXPECT_EQ(WorkersOnHostOf(local, {"chief", 0}), 2);
  EXPECT_EQ(WorkersOnHostOf(local, {"ps", 1}), 0);  // on another host
  const ClusterSpec mixed = Spec({"a:1", "a:2", "b:1"});
  EXPECT_EQ(WorkersOnHostOf(mixed, {"worker", 1}), 2);
  EXPECT_EQ(WorkersOnHostOf(mixed, {"worker", 2}), 1);
  EXPECT_EQ(WorkersOnHostOf(mixed, {"evaluator", 0}), 0);  // not in the spec
}

TEST(CpuShare, TheFlagThenOmpNumThreadsThenTheShareDecide) {
  ClusterConfig config{Spec({"127.0.0.1:3", "127.0.0.1:4"}), {"worker", 1}};
  const CpuBudget two{2, 0};
  EXPECT_EQ(ChooseComputeThreads(3, "5", two, config).threads, 3);
  EXPECT_EQ(ChooseComputeThreads(3, "5", two, config).why, "--intra_op_threads");
  EXPECT_EQ(ChooseComputeThreads(0, "5", two, config).threads, 5);
  EXPECT_EQ(ChooseComputeThreads(0, "5", two, config).why, "OMP_NUM_THREADS");
  for (const char* ignored : {static_cast<const char*>(nullptr), "", "0", "abc", "-2"}) {
    const ThreadChoice c = ChooseComputeThreads(0, ignored, two, config);
    EXPECT_EQ(c.threads, 1) << (ignored ? ignored : "null");
    EXPECT_EQ(c.why,
              "2 usable CPUs (affinity 2, no cgroup quota) shared by 2 workers on this host");
  }
  // A pod limited to 3 CPUs on a 16-CPU node, alone on its host.
  ClusterConfig pod{Spec({"w0:1", "w1:1"}), {"worker", 0}};
  const ThreadChoice limited = ChooseComputeThreads(0, nullptr, CpuBudget{16, 2.5}, pod);
  EXPECT_EQ(limited.threads, 3);
  EXPECT_EQ(limited.why,
            "3 usable CPUs (affinity 16, cgroup quota 2.5) shared by 1 worker on this host");
  // More workers than CPUs: one thread each, never none.
  ClusterConfig crowded{Spec({"127.0.0.1:3", "127.0.0.1:4", "127.0.0.1:5"}), {"worker", 2}};
  EXPECT_EQ(ChooseComputeThreads(0, nullptr, CpuBudget{1, 0}, crowded).threads, 1);
}

TEST(CpuShare, EvaluationYieldsWhereTheHostsWorkersTakeEveryCpu) {
  const CpuBudget two{2, 0};
  // The main job: a chief beside one worker on 2 CPUs.
  ClusterConfig chief{Spec({"127.0.0.1:3"}), {"chief", 0}};
  PriorityChoice c = ChooseEvaluationPriority(two, chief);
  EXPECT_TRUE(c.idle);
  EXPECT_EQ(c.why,
            "1 worker on this host computes on 2 threads of 2 usable CPUs: evaluation runs on "
            "what training leaves");
  // Two workers of one thread each on 3 CPUs leave one.
  c = ChooseEvaluationPriority(CpuBudget{3, 0},
                               ClusterConfig{Spec({"127.0.0.1:3", "localhost:4"}), {"chief", 0}});
  EXPECT_FALSE(c.idle);
  EXPECT_EQ(c.why, "2 workers on this host compute on 1 thread each of 3 usable CPUs, leaving 1");
  // A chief on a host of its own (a Kubernetes pod), an evaluator outside
  // the spec, a worker.
  EXPECT_FALSE(ChooseEvaluationPriority(two, ClusterConfig{Spec({"w0:1"}), {"chief", 0}}).idle);
  EXPECT_FALSE(
      ChooseEvaluationPriority(two, ClusterConfig{Spec({"127.0.0.1:3"}), {"evaluator", 0}}).idle);
  EXPECT_FALSE(
      ChooseEvaluationPriority(two, ClusterConfig{Spec({"127.0.0.1:3"}), {"worker", 0}}).idle);
  // More workers than CPUs.
  EXPECT_TRUE(
      ChooseEvaluationPriority(CpuBudget{1, 0},
                               ClusterConfig{Spec({"127.0.0.1:3", "127.0.0.1:4"}), {"chief", 0}})
          .idle);
}

TEST(CpuShare, InputYieldsWhereTheHostsWorkersComputeOnEveryCpu) {
  const CpuBudget two{2, 0};
  // The main job's worker: 2 compute threads on 2 CPUs.
  ClusterConfig worker{Spec({"127.0.0.1:3"}), {"worker", 0}};
  PriorityChoice c = ChooseInputPriority(2, false, two, worker);
  EXPECT_TRUE(c.idle);
  EXPECT_EQ(c.why,
            "1 worker on this host computes on 2 threads of 2 usable CPUs: input runs on what "
            "training leaves");
  // --intra_op_threads=1 leaves a CPU; on GPUs the CPU threads mostly wait.
  c = ChooseInputPriority(1, false, two, worker);
  EXPECT_FALSE(c.idle);
  EXPECT_EQ(c.why, "1 worker on this host computes on 1 thread of 2 usable CPUs, leaving 1");
  c = ChooseInputPriority(2, true, two, worker);
  EXPECT_FALSE(c.idle);
  EXPECT_EQ(c.why, "it computes on GPUs");
  // Two workers of one thread each on 2 CPUs take both; on 3 they leave one.
  ClusterConfig pair{Spec({"127.0.0.1:3", "localhost:4"}), {"worker", 1}};
  EXPECT_TRUE(ChooseInputPriority(1, false, two, pair).idle);
  EXPECT_FALSE(ChooseInputPriority(1, false, CpuBudget{3, 0}, pair).idle);
  // A cgroup quota of 1.5 CPUs is 2 usable.
  EXPECT_TRUE(ChooseInputPriority(2, false, CpuBudget{8, 1.5}, worker).idle);
}

TEST(CpuShare, PriorityFlagIsIdleNormalOrAutosChoice) {
  int asked = 0;
  const auto automatic = [&asked] {
    ++asked;
    return PriorityChoice{true, "chosen"};
  };
  auto c = ParsePriorityFlag("--input_priority", "idle", automatic);
  PS_ASSERT_OK(c.status());
  EXPECT_TRUE(c->idle);
  EXPECT_EQ(c->why, "--input_priority");
  c = ParsePriorityFlag("--input_priority", "normal", automatic);
  PS_ASSERT_OK(c.status());
  EXPECT_FALSE(c->idle);
  EXPECT_EQ(asked, 0);
  c = ParsePriorityFlag("--input_priority", "auto", automatic);
  PS_ASSERT_OK(c.status());
  EXPECT_EQ(c->why, "chosen");
  EXPECT_EQ(asked, 1);
  c = ParsePriorityFlag("--eval_priority", "Idle", automatic);
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument) << c.status().ToString();
  EXPECT_EQ(c.status().message(), "--eval_priority must be auto, idle or normal, got \"Idle\"");
}

}  // namespace
}  // namespace cluster
}  // namespace pstrain
