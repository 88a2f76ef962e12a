// Every binary's --help, as a person reads it: exit 0, the binary's name
// and usage first, its own flags (not glog's; an offline tool no TLS
// flags, which only cluster tasks read), and for a binary that takes
// --model every built-in network it accepts.
#include <gtest/gtest.h>

#include "nn/model_spec.h"
#include "tests/integration/process_harness.h"

namespace pstrain {
namespace {

using testing::BuildDir;

struct Binary {
  const char* path;  // under the build dir
  bool task;         // a cluster task: reads the TLS flags
  bool takes_model;
};

const Binary kBinaries[] = {
    {"ps/ps_server", true, false},           {"chief/chief", true, true},
    {"worker/worker", true, true},           {"chief/evaluator", true, true},
    {"export/pstrain_export", false, true},  {"tools/pstrain_model_info", false, true},
    {"tools/pstrain_convert", false, false}, {"tools/pstrain_fmnist_to_cifar", false, false},
    {"tools/event_reader", false, false},    {"cluster/cluster_spec_check", false, false},
};

TEST(Help, EveryBinarySaysWhatItTakes) {
  for (const Binary& b : kBinaries) {
    std::string out;
    ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/" + b.path, "--help"},
                                       std::chrono::seconds(30), &out),
              "exit code 0")
        << b.path << "\n"
        << out;
    const std::string name = std::string(b.path).substr(std::string(b.path).rfind('/') + 1);
    EXPECT_EQ(out.rfind("[cmd] " + name + ": ", 0), 0u) << b.path << "\n" << out;
    EXPECT_EQ(out.find("logtostderr"), std::string::npos) << b.path << " lists glog's flags";
    EXPECT_EQ(out.find("-tls_cert") != std::string::npos, b.task)
        << b.path << (b.task ? " does not list" : " lists") << " the TLS flags\n"
        << out;
    if (!b.takes_model) continue;
    for (const std::string& model : nn::BuiltinModelNames()) {
      EXPECT_NE(out.find(model), std::string::npos) << b.path << " does not name " << model;
    }
  }
}

// make_cluster_spec takes no flags: --help gives its usage, exit 0.
TEST(Help, MakeClusterSpecGivesItsUsage) {
  std::string out;
  ASSERT_EQ(testing::RunToCompletion({BuildDir() + "/cluster/make_cluster_spec", "--help"},
                                     std::chrono::seconds(30), &out),
            "exit code 0")
      << out;
  EXPECT_NE(out.find("usage: make_cluster_spec JOB=ADDRESS"), std::string::npos) << out;
}

}  // namespace
}  // namespace pstrain
