#include "worker/overlap_choice.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

cluster::ClusterConfig TwoWorkersOnOneHost(int index) {
  cluster::ClusterConfig config;
  config.spec = *cluster::ParseClusterSpecJson(
      R"({"ps": ["localhost:1"], "worker": ["localhost:2", "127.0.0.1:3"]})");
  config.task = {"worker", index};
  return config;
}

cluster::CpuBudget Cpus(int n) {
  cluster::CpuBudget budget;
  budget.affinity_cpus = n;
  return budget;
}

TEST(ChooseOverlap, AutoOverlapsOnlyWhenTheHostsWorkersLeaveACpuFree) {
  // Two workers share the host: one thread each needs 2 CPUs.
  auto two = ChooseOverlap("auto", 1, Cpus(2), TwoWorkersOnOneHost(1));
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_FALSE(two->overlap) << two->why;
  auto three = ChooseOverlap("auto", 1, Cpus(3), TwoWorkersOnOneHost(0));
  PS_ASSERT_OK(three);
  EXPECT_TRUE(three->overlap) << three->why;
  auto threads = ChooseOverlap("auto", 2, Cpus(4), TwoWorkersOnOneHost(0));
  PS_ASSERT_OK(threads);
  EXPECT_FALSE(threads->overlap) << threads->why;
}

TEST(ChooseOverlap, AutoCountsACgroupQuota) {
  cluster::CpuBudget budget = Cpus(8);
  budget.quota_cpus = 2;  // a pod limited to 2 CPUs on an 8-CPU node
  auto choice = ChooseOverlap("auto", 1, budget, TwoWorkersOnOneHost(0));
  PS_ASSERT_OK(choice);
  EXPECT_FALSE(choice->overlap) << choice->why;
}

TEST(ChooseOverlap, OnAndOffAreObeyedAndAnythingElseIsRefused) {
  EXPECT_TRUE(ChooseOverlap("on", 2, Cpus(2), TwoWorkersOnOneHost(0))->overlap);
  EXPECT_FALSE(ChooseOverlap("off", 1, Cpus(64), TwoWorkersOnOneHost(0))->overlap);
  auto bad = ChooseOverlap("yes", 1, Cpus(2), TwoWorkersOnOneHost(0));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--overlap_transfers"), std::string::npos);
}

}  // namespace
}  // namespace pstrain
