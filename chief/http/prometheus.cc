// RenderPrometheus: the text exposition format, version 0.0.4.
// https://prometheus.io/docs/instrumenting/exposition_formats/
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "chief/http/metrics.h"

namespace pstrain {
namespace {

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round trip
  return std::string(buf, result.ptr);
}

// Label values escape backslash, double quote and line feed.
std::string EscapeLabel(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void Family(std::string* out, const char* name, const char* type, const char* help) {
  *out += "# HELP ";
  *out += name;
  *out += ' ';
  *out += help;
  *out += "\n# TYPE ";
  *out += name;
  *out += ' ';
  *out += type;
  *out += '\n';
}

void Sample(std::string* out, const char* name, double value) {
  *out += name;
  *out += ' ';
  *out += FormatValue(value);
  *out += '\n';
}

void Single(std::string* out, const char* name, const char* type, const char* help, double value) {
  Family(out, name, type, help);
  Sample(out, name, value);
}

// Embedding tables, a sample per table and ps.
void RenderTables(const std::vector<TableShardMetrics>& tables, std::string* out) {
  struct TableFamily {
    const char* name;
    const char* type;
    const char* help;
    int64_t TableShardMetrics::*field;
  };
  const TableFamily families[] = {
      {"pstrain_embedding_rows", "gauge", "Rows of an embedding table a ps holds.",
       &TableShardMetrics::rows},
      {"pstrain_embedding_bytes", "gauge",
       "Bytes an embedding table takes on a ps: rows, slots, index.", &TableShardMetrics::bytes},
      {"pstrain_embedding_admitted_total", "counter", "Rows an embedding table has made on a ps.",
       &TableShardMetrics::admitted},
      {"pstrain_embedding_expired_total", "counter",
       "Rows of an embedding table a ps dropped after ttl_steps untouched.",
       &TableShardMetrics::expired},
  };
  if (tables.empty()) return;
  for (const TableFamily& f : families) {
    Family(out, f.name, f.type, f.help);
    for (const TableShardMetrics& t : tables) {
      *out += std::string(f.name) + "{table=\"" + EscapeLabel(t.table) + "\",ps=\"" +
              std::to_string(t.ps) + "\"} " + FormatValue(static_cast<double>(t.*f.field)) + "\n";
    }
  }
}

}  // namespace

std::string RenderPrometheus(const ChiefMetrics& m) {
  std::string out;
  Single(&out, "pstrain_global_step", "counter", "Training steps applied so far.",
         static_cast<double>(m.global_step));
  Single(&out, "pstrain_loss", "gauge", "Latest training loss.", m.loss);
  Single(&out, "pstrain_learning_rate", "gauge", "Current learning rate.", m.learning_rate);
  Single(&out, "pstrain_steps_per_second", "gauge", "Global steps per second, recent average.",
         m.steps_per_sec);
  Single(&out, "pstrain_examples_per_second", "gauge",
         "Training examples per second, recent average.", m.examples_per_sec);
  Single(&out, "pstrain_stale_gradients_dropped_total", "counter",
         "Gradients dropped because they were computed at an old step.",
         static_cast<double>(m.stale_gradients_dropped));
  Family(&out, "pstrain_seconds_since_checkpoint", "gauge",
         "Seconds since the last checkpoint was written; no sample before the first.");
  if (m.seconds_since_checkpoint >= 0) {
    Sample(&out, "pstrain_seconds_since_checkpoint", m.seconds_since_checkpoint);
  }
  Single(&out, "pstrain_restores_total", "counter", "Parameter servers restored from a checkpoint.",
         static_cast<double>(m.restores));
  Single(&out, "pstrain_uptime_seconds", "gauge", "Seconds since the chief started.",
         m.uptime_secs);

  Family(&out, "pstrain_run_info", "gauge", "The job's model and training mode; always 1.");
  out += "pstrain_run_info{model=\"" + EscapeLabel(m.model) + "\",mode=\"" + EscapeLabel(m.mode) +
         "\"} 1\n";

  RenderTables(m.tables, &out);

  if (!m.workers_by_state.empty()) {
    Family(&out, "pstrain_workers", "gauge", "Workers in each state, every worker counted.");
    for (const auto& [state, n] : m.workers_by_state) {
      out += "pstrain_workers{state=\"" + EscapeLabel(state) + "\"} " + std::to_string(n) + "\n";
    }
  }
  Family(&out, "pstrain_task_up", "gauge",
         "1 when the task is running or being restored, 0 when dead, unreachable or done; of a "
         "large job, the workers not running only (pstrain_workers counts every one).");
  for (const TaskHealth& t : m.tasks) {
    out += "pstrain_task_up{task=\"" + EscapeLabel(t.task) + "\",state=\"" + EscapeLabel(t.state) +
           "\"} " + (TaskIsUp(t.state) ? "1" : "0") + "\n";
  }
  return out;
}

}  // namespace pstrain
