#include "deploy/local/task_flags.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace {

// Three jobs' flags, as ReadBinaryFlags would give them (a few of each).
std::map<std::string, FlagSet> Jobs() {
  return {{"ps", {{"max_memory_bytes", false}, {"v", false}}},
          {"chief",
           {{"train_dir", false}, {"learning_rate", false}, {"v", false}, {"sync_replicas", true}}},
          {"worker",
           {{"epochs", false}, {"learning_rate", false}, {"v", false}, {"sync_replicas", true}}}};
}

const std::vector<std::string> kLauncher = {"ps", "workers", "host"};
const std::map<std::string, std::string> kSets = {{"job", ""}, {"tls_ca", "--tls"}};

TEST(RouteFlags, EachFlagGoesToTheJobsThatTakeIt) {
  auto route = RouteFlags({"--epochs=3", "--learning_rate", "0.1", "--nosync_replicas", "--v=1",
                           "--max_memory_bytes=100", "--train_dir=runs/x"},
                          Jobs(), kLauncher, kSets);
  ASSERT_TRUE(route.ok()) << route.status().ToString();
  EXPECT_EQ(route->by_job.at("ps"), (std::vector<std::string>{"--v=1", "--max_memory_bytes=100"}));
  EXPECT_EQ(route->by_job.at("chief"),
            (std::vector<std::string>{"--learning_rate=0.1", "--nosync_replicas", "--v=1",
                                      "--train_dir=runs/x"}));
  EXPECT_EQ(route->by_job.at("worker"),
            (std::vector<std::string>{"--epochs=3", "--learning_rate=0.1", "--nosync_replicas",
                                      "--v=1"}));
}

TEST(RouteFlags, RefusesWhatNoTaskTakesNamingTheNearestFlag) {
  const struct {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"--lerning_rate=100"}, "no task takes --lerning_rate; did you mean --learning_rate?"},
      {{"--epoch=1"}, "no task takes --epoch; did you mean --epochs?"},
      {{"--worker=2"}, "no task takes --worker; did you mean --workers?"},
      {{"--noepochs"}, "no task takes --noepochs"},  // not a boolean
      {{"--job=ps"}, "--job is set by the launcher"},
      {{"--tls_ca=x"}, "--tls_ca is set by the launcher: use --tls"},
      {{"epochs=3"}, "unexpected argument 'epochs=3'"},
      {{"--epochs"}, "--epochs needs a value"},
  };
  for (const auto& c : cases) {
    auto route = RouteFlags(c.args, Jobs(), kLauncher, kSets);
    ASSERT_FALSE(route.ok()) << c.args[0];
    EXPECT_EQ(route.status().code(), Code::kInvalidArgument) << route.status().ToString();
    EXPECT_NE(route.status().message().find(c.says), std::string::npos)
        << c.args[0] << ": " << route.status().ToString();
  }
}

TEST(NearestName, SmallestEditDistance) {
  EXPECT_EQ(NearestName("lerning_rate", {"learning_rate", "learning_rates_x", "epochs"}),
            "learning_rate");
  EXPECT_EQ(NearestName("epoch", {"epochs", "eval_secs"}), "epochs");
  EXPECT_EQ(NearestName("x", {}), "");
}

}  // namespace
}  // namespace pstrain
