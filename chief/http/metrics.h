// ChiefMetrics: what the chief knows about a training job, as one plain value
// the supervisor fills and the HTTP endpoint renders (/metrics, /status, /).
//
// MetricsBoard hands snapshots from the supervisor to the HTTP handlers.
// Thread-safe: any thread may Publish() and Read() concurrently; a reader
// always sees one whole snapshot, never a mix of two.
//
// The Render functions are pure and thread-safe; they never fail.
#ifndef PSTRAIN_CHIEF_HTTP_METRICS_H_
#define PSTRAIN_CHIEF_HTTP_METRICS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/mutex.h"

namespace pstrain {

struct TaskHealth {
  std::string task;    // "ps:0", "worker:1"
  std::string state;   // "running", "dead", "restoring", "done" or "unreachable"
  std::string detail;  // free text for people, may be empty
};

// One ps's shard of an embedding table.
struct TableShardMetrics {
  std::string table;
  int ps = 0;
  int64_t rows = 0;
  int64_t bytes = 0;
  int64_t admitted = 0;  // rows made, ever
  int64_t expired = 0;   // rows dropped after ttl_steps, ever
};

struct LossPoint {
  int64_t step;
  double loss;
};

struct ChiefMetrics {
  int64_t global_step = 0;
  double loss = 0;
  double learning_rate = 0;
  double steps_per_sec = 0;
  double examples_per_sec = 0;
  int64_t stale_gradients_dropped = 0;
  double seconds_since_checkpoint = -1;  // < 0: no checkpoint yet
  int64_t restores = 0;
  std::string mode;  // "async" or "sync R/N"
  std::string model;
  std::string train_dir;
  double uptime_secs = 0;
  // The chief, the ps tasks and the workers worth a line: every worker of
  // a small job, else those not running (at most Supervisor's
  // kListedWorkers), so that the page and the metrics of a thousand
  // workers stay small.
  std::vector<TaskHealth> tasks;
  // The workers not among `tasks`, up and not up.
  int unlisted_workers_up = 0;
  int unlisted_workers_down = 0;
  // Every worker, by state ("running": 998, "dead": 2).
  std::map<std::string, int> workers_by_state;
  std::vector<TableShardMetrics> tables;  // per table and ps
  std::vector<LossPoint> loss_history;    // recent points, oldest first; the caller bounds it
};

class MetricsBoard {
 public:
  // Replaces the snapshot that Read() returns.
  void Publish(ChiefMetrics m);
  // A copy of the latest snapshot; a default ChiefMetrics before any Publish.
  ChiefMetrics Read() const;

 private:
  mutable Mutex mu_;
  ChiefMetrics current_ ABSL_GUARDED_BY(mu_);
};

// Whether a task in `state` counts as up (pstrain_task_up 1): "running" and
// "restoring" do; "dead", "unreachable" and "done" do not.
bool TaskIsUp(const std::string& state);

// Prometheus text exposition format 0.0.4, every family with # HELP and
// # TYPE. pstrain_seconds_since_checkpoint has no sample before the first
// checkpoint; non-finite values are written NaN, +Inf, -Inf.
std::string RenderPrometheus(const ChiefMetrics& m);

// A JSON object with ChiefMetrics' field names; seconds_since_checkpoint is
// null before the first checkpoint and non-finite numbers are null;
// loss_history is [{"step": S, "loss": L}, ...]; tables is [{"table": T,
// "ps": P, "rows": ..., "bytes": ..., "admitted": ..., "expired": ...}].
std::string RenderStatusJson(const ChiefMetrics& m);

// The self-contained HTML status page served at "/": header figures and the
// task table rendered on the server, a loss plot drawn by an inline script
// that refreshes everything from /status every 2 s. Loads nothing else.
std::string RenderStatusPage(const ChiefMetrics& m);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_HTTP_METRICS_H_
