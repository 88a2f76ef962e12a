#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "cluster/cluster_flags.h"
#include "cluster/cluster_spec.h"

namespace pstrain {
namespace cluster {
namespace {

constexpr char kKubeflowTfConfig[] = R"({
  "cluster": {"chief": ["job-chief-0.ns.svc:2222"],
              "ps": ["job-ps-0.ns.svc:2222", "job-ps-1.ns.svc:2222"],
              "worker": ["job-worker-0.ns.svc:2222", "job-worker-1.ns.svc:2222"]},
  "task": {"type": "worker", "index": 1, "trial": "7"},
  "environment": "cloud",
  "rpc_layer": "grpc"
})";

// A file in a fresh temporary directory, removed with it.
class TempFile {
 public:
  explicit TempFile(const std::string& contents) {
    char dir[] = "/tmp/cluster_test.XXXXXX";
    dir_ = mkdtemp(dir);
    path_ = dir_ + "/cluster.json";
    std::ofstream(path_) << contents;
  }
  ~TempFile() {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

TEST(ResolveClusterConfig, ReadsKubeflowTfConfigIgnoringExtraKeys) {
  StatusOr<ClusterConfig> config = ResolveClusterConfig("", kKubeflowTfConfig, "", -1);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "worker:1");
  EXPECT_EQ(config->spec.NumTasks("ps"), 2);
  EXPECT_EQ(config->spec.Address("chief", 0), "job-chief-0.ns.svc:2222");
}

TEST(ResolveClusterConfig, FlagsOverrideTfConfigTask) {
  StatusOr<ClusterConfig> config = ResolveClusterConfig("", kKubeflowTfConfig, "ps", 0);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "ps:0");

  config = ResolveClusterConfig("", kKubeflowTfConfig, "", 0);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "worker:0");

  config = ResolveClusterConfig("", kKubeflowTfConfig, "master", 0);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "chief:0");
}

TEST(ResolveClusterConfig, MasterTaskTypeIsChief) {
  StatusOr<ClusterConfig> config = ResolveClusterConfig(
      "", R"({"cluster":{"master":["m:1"],"ps":["p:1"]},"task":{"type":"master","index":0}})", "",
      -1);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "chief:0");
}

TEST(ResolveClusterConfig, EvaluatorMayRunOutsideTheCluster) {
  StatusOr<ClusterConfig> config = ResolveClusterConfig(
      "", R"({"cluster":{"ps":["p:1"],"worker":["w:1"]},"task":{"type":"evaluator","index":0}})",
      "", -1);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "evaluator:0");
  EXPECT_EQ(config->spec.NumTasks("evaluator"), 0);
}

TEST(ResolveClusterConfig, FileWinsOverTfConfigAndTaskIndexDefaultsToZero) {
  TempFile file(R"({"ps":["localhost:2222"],"worker":["localhost:2223"]})");
  StatusOr<ClusterConfig> config = ResolveClusterConfig(file.path(), kKubeflowTfConfig, "ps", -1);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->task.ToString(), "ps:0");
  EXPECT_EQ(config->spec.Address("worker", 0), "localhost:2223");
}

TEST(ResolveClusterConfig, FileErrorsNameTheFile) {
  TempFile file(R"({"ps":["localhost:2222"],"worker":["localhost:2222"]})");
  StatusOr<ClusterConfig> config = ResolveClusterConfig(file.path(), nullptr, "ps", 0);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(config.status().message().rfind(file.path() + ": duplicate address", 0), 0u)
      << config.status().message();
}

TEST(ResolveClusterConfig, UnreadableFileIsNotFound) {
  StatusOr<ClusterConfig> config =
      ResolveClusterConfig("/nonexistent/cluster.json", kKubeflowTfConfig, "ps", 0);
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kNotFound);
  EXPECT_NE(
      config.status().message().find("cannot read cluster spec file /nonexistent/cluster.json"),
      std::string::npos)
      << config.status().message();

  config = ResolveClusterConfig("/tmp", nullptr, "ps", 0);  // a directory
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kNotFound);
}

struct BadConfig {
  const char* tf_config;
  const char* job;
  int task;
  const char* message;  // a substring of the InvalidArgument message
};

TEST(ResolveClusterConfig, RejectsBadConfigs) {
  const BadConfig cases[] = {
      {nullptr, "ps", 0, "no cluster spec: pass --cluster_spec=FILE or set TF_CONFIG"},
      {"", "ps", 0, "no cluster spec"},
      {"{", "ps", 0, "TF_CONFIG: invalid JSON: parse error at line 1, column 2"},
      {"[]", "ps", 0, "TF_CONFIG: must be a JSON object"},
      {R"({"task":{"type":"ps"}})", "", -1, "TF_CONFIG: has no \"cluster\" key"},
      {R"({"cluster":{"worker":["w:1"]}})", "worker", 0, "TF_CONFIG: cluster spec has no ps task"},
      {R"({"cluster":{"ps":["p:1"]},"task":"ps"})", "", -1, "\"task\" must be an object"},
      {R"({"cluster":{"ps":["p:1"]},"task":{"type":1}})", "", -1, "task.type must be a string"},
      {R"({"cluster":{"ps":["p:1"]},"task":{"type":"ps","index":"0"}})", "", -1,
       "task.index must be an integer"},
      {R"({"cluster":{"ps":["p:1"]},"task":{"type":"ps","index":-1}})", "", -1,
       "task index -1 out of range"},
      {R"({"cluster":{"ps":["p:1"]}})", "", -1, "missing task type"},
      {R"({"cluster":{"ps":["p:1"]},"task":{"index":0}})", "", -1, "missing task type"},
      {R"({"cluster":{"ps":["p:1"]},"task":{"type":"trainer","index":0}})", "", -1,
       "unknown job name \"trainer\""},
      {R"({"cluster":{"ps":["p:1","p:2"]},"task":{"type":"ps","index":2}})", "", -1,
       "task index 2 out of range for job ps: expected 0..1"},
      {R"({"cluster":{"ps":["p:1"]}})", "ps", 5,
       "task index 5 out of range for job ps: expected 0..0"},
      {R"({"cluster":{"ps":["p:1"]}})", "worker", 0,
       "task index 0 out of range: job worker has no tasks in the cluster spec"},
  };
  for (const BadConfig& c : cases) {
    const char* tf = c.tf_config == nullptr ? "(null)" : c.tf_config;
    StatusOr<ClusterConfig> config = ResolveClusterConfig("", c.tf_config, c.job, c.task);
    ASSERT_FALSE(config.ok()) << tf;
    EXPECT_EQ(config.status().code(), Code::kInvalidArgument) << tf;
    EXPECT_NE(config.status().message().find(c.message), std::string::npos)
        << tf << " -> " << config.status().message();
  }
}

TEST(ClusterConfigFromFlagsOrDieDeathTest, ExitsTwoOnWrongJob) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FLAGS_cluster_spec = "";
  FLAGS_job = "";
  FLAGS_task = -1;
  setenv("TF_CONFIG", kKubeflowTfConfig, 1);
  EXPECT_EXIT(ClusterConfigFromFlagsOrDie("ps"), testing::ExitedWithCode(2),
              "invalid cluster spec: this program runs a ps task, but the task is worker:1");
  EXPECT_EQ(ClusterConfigFromFlagsOrDie("worker").task.ToString(), "worker:1");
  EXPECT_EQ(ClusterConfigFromFlagsOrDie("").task.ToString(), "worker:1");
  unsetenv("TF_CONFIG");
  EXPECT_EXIT(ClusterConfigFromFlagsOrDie(""), testing::ExitedWithCode(2),
              "invalid cluster spec: no cluster spec");
}

}  // namespace
}  // namespace cluster
}  // namespace pstrain
