// Runs the real cluster_spec_check binary to check the exit-code contract of
// ClusterConfigFromFlagsOrDie (exit 2 and exactly one line on stderr), and
// make_cluster_spec, whose specs it reads.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace pstrain {
namespace cluster {
namespace {

// The build directory's cluster/`name`: from PSTRAIN_BIN_DIR (set by ctest)
// or beside this test binary.
std::string ToolBinary(const std::string& name) {
  const char* bin_dir = std::getenv("PSTRAIN_BIN_DIR");
  if (bin_dir != nullptr && bin_dir[0] != '\0') return std::string(bin_dir) + "/cluster/" + name;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  std::string path(self, n);
  return path.substr(0, path.rfind('/') + 1) + name;
}

std::string SpecCheckBinary() { return ToolBinary("cluster_spec_check"); }

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

// Runs `binary` with `args` and an empty TF_CONFIG.
RunResult RunTool(const std::string& dir, const std::string& binary, const std::string& args) {
  const std::string out = dir + "/stdout", err = dir + "/stderr";
  const std::string command = "env -u TF_CONFIG " + binary + " " + args + " >" + out + " 2>" + err;
  RunResult result;
  int status = std::system(command.c_str());
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.out = ReadAll(out);
  result.err = ReadAll(err);
  return result;
}

RunResult RunSpecCheck(const std::string& dir, const std::string& args) {
  return RunTool(dir, SpecCheckBinary(), args);
}

class SpecCheckTest : public testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/spec_check_test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    ASSERT_EQ(access(SpecCheckBinary().c_str(), X_OK), 0) << SpecCheckBinary() << " not built";
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }

  std::string WriteSpec(const std::string& text) {
    const std::string path = dir_ + "/cluster.json";
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(SpecCheckTest, BadSpecExitsTwoWithOneLine) {
  const std::string spec = WriteSpec(R"({"ps":["p:1"],"worker":["p:1"]})");
  RunResult r = RunSpecCheck(dir_, "--cluster_spec=" + spec + " --job=worker --task=0");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "cluster_spec_check: invalid cluster spec: " + spec +
                       ": duplicate address p:1 used by ps:0 and worker:0\n");
  EXPECT_EQ(r.out, "");
}

TEST_F(SpecCheckTest, MissingSpecExitsTwo) {
  RunResult r = RunSpecCheck(dir_, "--job=worker");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "cluster_spec_check: invalid cluster spec: no cluster spec: pass "
            "--cluster_spec=FILE or set TF_CONFIG\n");
}

TEST_F(SpecCheckTest, GoodSpecPrintsTheTask) {
  const std::string spec = WriteSpec(R"({"ps":["p:1"],"worker":["w:1","w:2"]})");
  RunResult r = RunSpecCheck(dir_, "--cluster_spec=" + spec + " --job=worker --task=1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "task worker:1\nps:0 p:1\nworker:0 w:1\nworker:1 w:2\n");
}

// What scripts do: write a spec with make_cluster_spec, start a task on it.
TEST_F(SpecCheckTest, MakeClusterSpecWritesWhatTheTasksRead) {
  RunResult made =
      RunTool(dir_, ToolBinary("make_cluster_spec"), "chief=c:1 ps=p:1,p:2 worker=w:1");
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.out, R"({"chief":["c:1"],"ps":["p:1","p:2"],"worker":["w:1"]})"
                      "\n");
  const std::string spec = WriteSpec(made.out);
  RunResult r = RunSpecCheck(dir_, "--cluster_spec=" + spec + " --job=ps --task=1");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "task ps:1\nchief:0 c:1\nps:0 p:1\nps:1 p:2\nworker:0 w:1\n");
}

TEST_F(SpecCheckTest, MakeClusterSpecRefusesABadSpecWithExit2) {
  RunResult r = RunTool(dir_, ToolBinary("make_cluster_spec"), "ps=p:1 worker=p:1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "make_cluster_spec: invalid cluster spec: duplicate address p:1 used by ps:0 "
            "and worker:0\n");
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(RunTool(dir_, ToolBinary("make_cluster_spec"), "ps").exit_code, 1);
}

}  // namespace
}  // namespace cluster
}  // namespace pstrain
