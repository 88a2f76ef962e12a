// RenderStatusJson: the /status document.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "chief/http/metrics.h"

namespace pstrain {
namespace {

// nlohmann writes non-finite doubles as null too; this says so at the call.
nlohmann::json Number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

}  // namespace

std::string RenderStatusJson(const ChiefMetrics& m) {
  nlohmann::json tasks = nlohmann::json::array();
  for (const TaskHealth& t : m.tasks) {
    tasks.push_back({{"task", t.task}, {"state", t.state}, {"detail", t.detail}});
  }
  nlohmann::json tables = nlohmann::json::array();
  for (const TableShardMetrics& t : m.tables) {
    tables.push_back({{"table", t.table},
                      {"ps", t.ps},
                      {"rows", t.rows},
                      {"bytes", t.bytes},
                      {"admitted", t.admitted},
                      {"expired", t.expired}});
  }
  nlohmann::json history = nlohmann::json::array();
  for (const LossPoint& p : m.loss_history) {
    history.push_back({{"step", p.step}, {"loss", Number(p.loss)}});
  }
  nlohmann::json doc = {
      {"global_step", m.global_step},
      {"loss", Number(m.loss)},
      {"learning_rate", Number(m.learning_rate)},
      {"steps_per_sec", Number(m.steps_per_sec)},
      {"examples_per_sec", Number(m.examples_per_sec)},
      {"stale_gradients_dropped", m.stale_gradients_dropped},
      {"seconds_since_checkpoint",
       m.seconds_since_checkpoint >= 0 ? Number(m.seconds_since_checkpoint) : nlohmann::json()},
      {"restores", m.restores},
      {"mode", m.mode},
      {"model", m.model},
      {"train_dir", m.train_dir},
      {"uptime_secs", Number(m.uptime_secs)},
      {"tasks", std::move(tasks)},
      {"unlisted_workers_up", m.unlisted_workers_up},
      {"unlisted_workers_down", m.unlisted_workers_down},
      {"workers_by_state", m.workers_by_state},
      {"tables", std::move(tables)},
      {"loss_history", std::move(history)},
  };
  // Invalid UTF-8 in a task detail is replaced rather than thrown.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace pstrain
