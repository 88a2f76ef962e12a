#include "cluster/cluster_spec.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

namespace pstrain {
namespace cluster {
namespace {

TEST(ParseClusterSpecJson, ReadsEveryJob) {
  StatusOr<ClusterSpec> spec = ParseClusterSpecJson(
      R"({"chief":["c:2222"],"ps":["p0:2222","p1:2222"],"worker":["w0:2222","w1:2223"],
          "evaluator":["e:1"]})");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->NumTasks("chief"), 1);
  EXPECT_EQ(spec->NumTasks("ps"), 2);
  EXPECT_EQ(spec->NumTasks("worker"), 2);
  EXPECT_EQ(spec->NumTasks("evaluator"), 1);
  EXPECT_EQ(spec->NumTasks("nobody"), 0);
  EXPECT_EQ(spec->Address("ps", 1), "p1:2222");
  EXPECT_EQ(spec->Address("worker", 1), "w1:2223");
}

TEST(ParseClusterSpecJson, MasterIsChief) {
  StatusOr<ClusterSpec> spec = ParseClusterSpecJson(R"({"master":["m:1"],"ps":["p:1"]})");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->NumTasks("master"), 0);
  EXPECT_EQ(spec->Address("chief", 0), "m:1");
}

TEST(ParseClusterSpecJson, AcceptsAddressForms) {
  for (const char* address : {"localhost:1", "10.0.0.1:65535", "[::1]:2222",
                              "my-svc.ns.svc.cluster.local:2222", "w_0:80"}) {
    const std::string text = std::string(R"({"ps":[")") + address + R"("]})";
    StatusOr<ClusterSpec> spec = ParseClusterSpecJson(text);
    EXPECT_TRUE(spec.ok()) << address << ": " << spec.status().ToString();
  }
}

TEST(ClusterSpecToJson, ReadsBackAsTheSameSpec) {
  ClusterSpec spec;
  spec.jobs["chief"] = {"chief-0.default.svc:2222"};
  spec.jobs["ps"] = {"10.0.0.1:2222", "[::1]:2223"};
  spec.jobs["worker"] = {"w0:1", "w1:2", "w2:3"};
  auto back = ParseClusterSpecJson(spec.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << spec.ToJson();
  EXPECT_EQ(back->jobs, spec.jobs);
}

// A host string with JSON's special characters is escaped, not spliced in:
// the parser then names the bad address instead of failing on the syntax or
// reading another spec.
TEST(ClusterSpecToJson, EscapesHosts) {
  ClusterSpec spec;
  spec.jobs["ps"] = {"a\"],\"worker\":[\"b:1"};
  EXPECT_EQ(spec.ToJson(), R"({"ps":["a\"],\"worker\":[\"b:1"]})");
  auto back = ParseClusterSpecJson(spec.ToJson());
  PS_ASSERT_CODE(back, Code::kInvalidArgument);
  EXPECT_NE(back.status().message().find("ps:0"), std::string::npos) << back.status().ToString();
}

TEST(TaskId, ToString) { EXPECT_EQ((TaskId{"worker", 1}).ToString(), "worker:1"); }

struct BadSpec {
  const char* json;
  Code code;
  const char* message;  // a substring of the error message
};

TEST(ParseClusterSpecJson, RejectsBadSpecs) {
  const BadSpec cases[] = {
      {R"({"ps":["p:1"],)", Code::kInvalidArgument, "invalid JSON: parse error at line 1, column"},
      {"", Code::kInvalidArgument, "invalid JSON"},
      // A number past double's range: nlohmann's out_of_range (found by the
      // cluster_spec fuzz target; it escaped as an exception and aborted).
      {"888888888888888888888888888888888888888e888", Code::kInvalidArgument,
       "invalid JSON: number overflow"},
      {R"({"ps":["p:1"],"x":1e999})", Code::kInvalidArgument, "number overflow"},
      {R"(["p:1"])", Code::kInvalidArgument, "must be a JSON object"},
      {R"({"ps":["p:1"],"trainer":["t:1"]})", Code::kInvalidArgument,
       "unknown job name \"trainer\""},
      {R"({"ps":"p:1"})", Code::kInvalidArgument, "job ps must be a list"},
      {R"({"ps":[2222]})", Code::kInvalidArgument, "got a number element"},
      {R"({"ps":["p"]})", Code::kInvalidArgument, "task ps:0: address \"p\" is not host:port"},
      {R"({"ps":[":1"]})", Code::kInvalidArgument, "is not host:port"},
      {R"({"ps":["a b:1"]})", Code::kInvalidArgument, "is not host:port"},
      {R"({"ps":["::1:1"]})", Code::kInvalidArgument, "is not host:port"},
      {R"({"ps":["p:"]})", Code::kInvalidArgument, "port must be 1..65535"},
      {R"({"ps":["p:0"]})", Code::kInvalidArgument, "has port \"0\""},
      {R"({"ps":["p:65536"]})", Code::kInvalidArgument, "has port \"65536\""},
      {R"({"ps":["p:-1"]})", Code::kInvalidArgument, "port must be 1..65535"},
      {R"({"ps":["p:22x"]})", Code::kInvalidArgument, "port must be 1..65535"},
      {R"({"ps":["p:2222"],"worker":["w:1","p:2222"]})", Code::kInvalidArgument,
       "duplicate address p:2222 used by ps:0 and worker:1"},
      {R"({"worker":["w:1"]})", Code::kInvalidArgument, "no ps task"},
      {R"({"ps":[],"worker":["w:1"]})", Code::kInvalidArgument, "no ps task"},
      {R"({"ps":["p:1"],"chief":["c:1","c:2"]})", Code::kInvalidArgument,
       "2 chief tasks; at most one"},
      {R"({"ps":["p:1"],"chief":["c:1"],"master":["m:1"]})", Code::kInvalidArgument,
       "job chief is listed twice"},
  };
  for (const BadSpec& c : cases) {
    StatusOr<ClusterSpec> spec = ParseClusterSpecJson(c.json);
    ASSERT_FALSE(spec.ok()) << c.json;
    EXPECT_EQ(spec.status().code(), c.code) << c.json;
    EXPECT_NE(spec.status().message().find(c.message), std::string::npos)
        << c.json << " -> " << spec.status().message();
    EXPECT_EQ(spec.status().message().find('\n'), std::string::npos) << c.json;
  }
}

}  // namespace
}  // namespace cluster
}  // namespace pstrain
