#include <cmath>
#include <limits>
#include <regex>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "chief/http/metrics.h"

namespace pstrain {
namespace {

ChiefMetrics Sample() {
  ChiefMetrics m;
  m.global_step = 12345;
  m.loss = 0.6931;
  m.learning_rate = 0.05;
  m.steps_per_sec = 20.5;
  m.examples_per_sec = 2624;
  m.stale_gradients_dropped = 3;
  m.seconds_since_checkpoint = 12.5;
  m.restores = 2;
  m.mode = "sync 2/3";
  m.model = "mnist";
  m.train_dir = "runs/x";
  m.uptime_secs = 100;
  m.tasks = {{"ps:0", "running", ""},
             {"ps:1", "restoring", "from step 12000"},
             {"worker:0", "dead", "no heartbeat"},
             {"worker:1", "done", ""}};
  m.loss_history = {{100, 2.3}, {200, 1.5}, {300, 0.6931}};
  m.tables = {{"users/embedding_weights", 0, 1000, 163840, 1200, 200},
              {"users/embedding_weights", 1, 990, 162000, 1190, 200}};
  return m;
}

// Every line is a comment (# HELP name text / # TYPE name type) or a sample
// "name{labels} value"; returns the samples as "name{labels}" -> value.
std::map<std::string, std::string> ParsePrometheus(const std::string& text) {
  static const std::regex kHelp(R"(# HELP [a-zA-Z_:][a-zA-Z0-9_:]* .+)");
  static const std::regex kType(R"(# TYPE [a-zA-Z_:][a-zA-Z0-9_:]* (counter|gauge))");
  static const std::regex kSample(
      R"(([a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})?) (\S+))");
  std::map<std::string, std::string> samples;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_match(line, kHelp) || std::regex_match(line, kType)) continue;
    EXPECT_TRUE(std::regex_match(line, match, kSample)) << "unparsable line: " << line;
    if (!match.empty()) samples[match[1]] = match[5];
  }
  return samples;
}

TEST(RenderPrometheus, EveryLineParsesAndCarriesTheFigures) {
  const std::string text = RenderPrometheus(Sample());
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  std::map<std::string, std::string> s = ParsePrometheus(text);
  EXPECT_EQ(s["pstrain_global_step"], "12345");
  EXPECT_EQ(s["pstrain_loss"], "0.6931");
  EXPECT_EQ(s["pstrain_learning_rate"], "0.05");
  EXPECT_EQ(s["pstrain_steps_per_second"], "20.5");
  EXPECT_EQ(s["pstrain_examples_per_second"], "2624");
  EXPECT_EQ(s["pstrain_stale_gradients_dropped_total"], "3");
  EXPECT_EQ(s["pstrain_seconds_since_checkpoint"], "12.5");
  EXPECT_EQ(s["pstrain_restores_total"], "2");
  EXPECT_EQ(s["pstrain_task_up{task=\"ps:0\",state=\"running\"}"], "1");
  EXPECT_EQ(s["pstrain_task_up{task=\"ps:1\",state=\"restoring\"}"], "1");
  EXPECT_EQ(s["pstrain_task_up{task=\"worker:0\",state=\"dead\"}"], "0");
  EXPECT_EQ(s["pstrain_task_up{task=\"worker:1\",state=\"done\"}"], "0");
  EXPECT_EQ(s["pstrain_embedding_rows{table=\"users/embedding_weights\",ps=\"1\"}"], "990");
  EXPECT_EQ(s["pstrain_embedding_bytes{table=\"users/embedding_weights\",ps=\"0\"}"], "163840");
  EXPECT_EQ(s["pstrain_embedding_admitted_total{table=\"users/embedding_weights\",ps=\"0\"}"],
            "1200");
  EXPECT_EQ(s["pstrain_embedding_expired_total{table=\"users/embedding_weights\",ps=\"1\"}"],
            "200");
  EXPECT_NE(text.find("# TYPE pstrain_global_step counter\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE pstrain_loss gauge\n"), std::string::npos);
  EXPECT_NE(text.find("# TYPE pstrain_task_up gauge\n"), std::string::npos);
}

TEST(RenderPrometheus, NoCheckpointSampleBeforeTheFirstCheckpoint) {
  ChiefMetrics m = Sample();
  m.seconds_since_checkpoint = -1;
  const std::string text = RenderPrometheus(m);
  EXPECT_EQ(ParsePrometheus(text).count("pstrain_seconds_since_checkpoint"), 0u);
  EXPECT_NE(text.find("# TYPE pstrain_seconds_since_checkpoint gauge"), std::string::npos);
}

TEST(RenderPrometheus, EscapesLabelsAndWritesNonFiniteValues) {
  ChiefMetrics m;
  m.loss = std::numeric_limits<double>::quiet_NaN();
  m.learning_rate = std::numeric_limits<double>::infinity();
  m.tasks = {{"odd\"task\\\n", "running", ""}};
  std::map<std::string, std::string> s = ParsePrometheus(RenderPrometheus(m));
  EXPECT_EQ(s["pstrain_loss"], "NaN");
  EXPECT_EQ(s["pstrain_learning_rate"], "+Inf");
  EXPECT_EQ(s["pstrain_task_up{task=\"odd\\\"task\\\\\\n\",state=\"running\"}"], "1");
}

TEST(RenderStatusJson, HasEveryField) {
  nlohmann::json j = nlohmann::json::parse(RenderStatusJson(Sample()));
  EXPECT_EQ(j["global_step"], 12345);
  EXPECT_DOUBLE_EQ(j["loss"].get<double>(), 0.6931);
  EXPECT_DOUBLE_EQ(j["learning_rate"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j["steps_per_sec"].get<double>(), 20.5);
  EXPECT_DOUBLE_EQ(j["examples_per_sec"].get<double>(), 2624);
  EXPECT_EQ(j["stale_gradients_dropped"], 3);
  EXPECT_DOUBLE_EQ(j["seconds_since_checkpoint"].get<double>(), 12.5);
  EXPECT_EQ(j["restores"], 2);
  EXPECT_EQ(j["mode"], "sync 2/3");
  EXPECT_EQ(j["model"], "mnist");
  EXPECT_EQ(j["train_dir"], "runs/x");
  EXPECT_DOUBLE_EQ(j["uptime_secs"].get<double>(), 100);
  ASSERT_EQ(j["tasks"].size(), 4u);
  EXPECT_EQ(j["tasks"][1]["task"], "ps:1");
  EXPECT_EQ(j["tasks"][1]["state"], "restoring");
  EXPECT_EQ(j["tasks"][1]["detail"], "from step 12000");
  ASSERT_EQ(j["tables"].size(), 2u);
  EXPECT_EQ(j["tables"][1]["table"], "users/embedding_weights");
  EXPECT_EQ(j["tables"][1]["ps"], 1);
  EXPECT_EQ(j["tables"][1]["rows"], 990);
  EXPECT_EQ(j["tables"][0]["expired"], 200);
  ASSERT_EQ(j["loss_history"].size(), 3u);
  EXPECT_EQ(j["loss_history"][0]["step"], 100);
  EXPECT_DOUBLE_EQ(j["loss_history"][0]["loss"].get<double>(), 2.3);
}

TEST(RenderStatusJson, NullForNoCheckpointAndNonFiniteLoss) {
  ChiefMetrics m;
  m.loss = std::numeric_limits<double>::quiet_NaN();
  m.loss_history = {{1, std::numeric_limits<double>::infinity()}};
  nlohmann::json j = nlohmann::json::parse(RenderStatusJson(m));
  EXPECT_TRUE(j["seconds_since_checkpoint"].is_null());
  EXPECT_TRUE(j["loss"].is_null());
  EXPECT_TRUE(j["loss_history"][0]["loss"].is_null());
}

TEST(RenderStatusPage, ShowsFiguresAndTasksAndLoadsNothingElse) {
  const std::string page = RenderStatusPage(Sample());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find(">12,345<"), std::string::npos);
  EXPECT_NE(page.find(">0.6931<"), std::string::npos);
  EXPECT_NE(page.find(">20.5<"), std::string::npos);
  EXPECT_NE(page.find(">sync 2/3<"), std::string::npos);
  EXPECT_NE(page.find("<tr class=\"task state-dead\"><td class=\"name\">worker:0</td>"),
            std::string::npos);
  EXPECT_NE(page.find("<svg id=\"plot\""), std::string::npos);
  EXPECT_NE(page.find("setInterval(refresh, 2000)"), std::string::npos);
  // No external resources: no src= or href= at all, no stylesheet links.
  EXPECT_EQ(page.find("src="), std::string::npos);
  EXPECT_EQ(page.find("href="), std::string::npos);
  EXPECT_EQ(page.find("<link"), std::string::npos);
}

TEST(RenderStatusPage, EscapesEverythingItWasGiven) {
  ChiefMetrics m;
  m.model = "<b>m</b>";
  m.train_dir = "a&b";
  m.tasks = {{"ps:0", "<script>", "</script><script>alert(1)</script>"}};
  const std::string page = RenderStatusPage(m);
  EXPECT_EQ(page.find("<b>m</b>"), std::string::npos);
  EXPECT_NE(page.find("&lt;b&gt;m&lt;/b&gt;"), std::string::npos);
  EXPECT_NE(page.find("a&amp;b"), std::string::npos);
  EXPECT_EQ(page.find("alert(1)</script>"),
            std::string::npos);  // neither in HTML nor in the embedded JSON
  EXPECT_NE(page.find("state-other"), std::string::npos);
}

TEST(MetricsBoard, ReadReturnsTheLastPublished) {
  MetricsBoard board;
  EXPECT_EQ(board.Read().global_step, 0);
  ChiefMetrics m = Sample();
  board.Publish(m);
  EXPECT_EQ(board.Read().global_step, 12345);
  EXPECT_EQ(board.Read().tasks.size(), 4u);
}

}  // namespace
}  // namespace pstrain
