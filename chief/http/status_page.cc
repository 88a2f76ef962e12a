// RenderStatusPage: the page at "/". Everything a person needs is rendered
// here, so the page reads without JavaScript; the inline script
// (status_page_assets.h) draws the loss plot and keeps it all current.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <string>

#include "chief/http/metrics.h"
#include "chief/http/status_page_assets.h"

namespace pstrain {
namespace {

const char kDash[] = "\xe2\x80\x93";  // en dash: no value

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// The number formats below match the script's (sig, grouped, fixed1,
// duration), so the first refresh changes nothing that has not changed.
std::string Sig(double v, int digits) {
  if (!std::isfinite(v)) return kDash;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

std::string Grouped(double v) {
  if (!std::isfinite(v)) return kDash;
  const int64_t n = std::llround(v);
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string Fixed1(double v) {
  if (!std::isfinite(v)) return kDash;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

std::string Duration(double secs) {
  if (!std::isfinite(secs) || secs < 0) return kDash;
  const int64_t s = static_cast<int64_t>(secs);
  char buf[64];
  if (s < 60) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "s", s);
  } else if (s < 3600) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "m %02" PRId64 "s", s / 60, s % 60);
  } else if (s < 86400) {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "h %02" PRId64 "m", s / 3600, s / 60 % 60);
  } else {
    std::snprintf(buf, sizeof(buf), "%" PRId64 "d %02" PRId64 "h", s / 86400, s / 3600 % 24);
  }
  return buf;
}

std::string StateClass(const std::string& state) {
  for (const char* known : {"running", "restoring", "dead", "unreachable", "done"}) {
    if (state == known) return std::string("state-") + known;
  }
  return "state-other";
}

std::string Stat(const char* label, const char* id, const std::string& value, bool minor) {
  return std::string("<div class=\"stat") + (minor ? " minor" : "") + "\"><div class=\"label\">" +
         label + "</div><div class=\"value\" id=\"" + id + "\">" + HtmlEscape(value) +
         "</div></div>\n";
}

std::string TaskRows(const ChiefMetrics& m) {
  if (m.tasks.empty())
    return "<tr><td colspan=\"3\" class=\"none\">No tasks reported yet.</td></tr>\n";
  std::string out;
  for (const TaskHealth& t : m.tasks) {
    const std::string cls = StateClass(t.state);
    out += "<tr class=\"task " + cls + "\"><td class=\"name\">" + HtmlEscape(t.task) +
           "</td><td><span class=\"pill " + cls + "\">" + HtmlEscape(t.state) +
           "</span></td><td class=\"detail\">" + HtmlEscape(t.detail) + "</td></tr>\n";
  }
  const int unlisted = m.unlisted_workers_up + m.unlisted_workers_down;
  if (unlisted > 0) {
    out += "<tr class=\"unlisted\"><td colspan=\"3\" class=\"none\">and " +
           std::to_string(unlisted) + " more workers (" + std::to_string(m.unlisted_workers_up) +
           " up)</td></tr>\n";
  }
  return out;
}

std::string TaskSummary(const ChiefMetrics& m) {
  int up = m.unlisted_workers_up;
  for (const TaskHealth& t : m.tasks) up += TaskIsUp(t.state) ? 1 : 0;
  const int total =
      static_cast<int>(m.tasks.size()) + m.unlisted_workers_up + m.unlisted_workers_down;
  return std::to_string(total) + " tasks \xc2\xb7 " + std::to_string(up) + " up \xc2\xb7 " +
         std::to_string(total - up) + " not up";
}

// JSON inside <script>: "<" only occurs within strings, where \u003c is the
// same character, so "</script>" cannot end the element early.
std::string ScriptSafeJson(const std::string& json) {
  std::string out;
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string RenderStatusPage(const ChiefMetrics& m) {
  const std::string model = m.model.empty() ? "model" : m.model;
  const std::string checkpoint =
      m.seconds_since_checkpoint < 0 ? "none yet" : Duration(m.seconds_since_checkpoint) + " ago";
  std::string page =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>pstrain \xc2\xb7 " +
      HtmlEscape(model) + "</title>\n<style>" + kStatusPageStyle +
      "</style>\n</head>\n<body>\n<header>\n"
      "<h1><span class=\"brand\">pstrain \xc2\xb7</span> <span id=\"v-model\">" +
      HtmlEscape(model) + "</span></h1>\n<span class=\"badge\" id=\"v-mode\">" +
      HtmlEscape(m.mode.empty() ? kDash : m.mode) +
      "</span>\n<span class=\"meta\">train dir <code id=\"v-train_dir\">" +
      HtmlEscape(m.train_dir.empty() ? kDash : m.train_dir) +
      "</code> \xc2\xb7 up <span id=\"v-uptime\">" + Duration(m.uptime_secs) +
      "</span></span>\n<span class=\"live\" id=\"live\">snapshot at page "
      "load</span>\n</header>\n<main>\n"
      "<div class=\"stats\">\n" +
      Stat("Global step", "v-global_step", Grouped(static_cast<double>(m.global_step)), false) +
      Stat("Loss", "v-loss", Sig(m.loss, 4), false) +
      Stat("Steps / sec", "v-steps_per_sec", Fixed1(m.steps_per_sec), false) +
      Stat("Examples / sec", "v-examples_per_sec", Grouped(m.examples_per_sec), false) +
      Stat("Learning rate", "v-learning_rate", Sig(m.learning_rate, 3), true) +
      Stat("Last checkpoint", "v-checkpoint", checkpoint, true) +
      Stat("Restores", "v-restores", Grouped(static_cast<double>(m.restores)), true) +
      Stat("Stale gradients dropped", "v-stale",
           Grouped(static_cast<double>(m.stale_gradients_dropped)), true) +
      "</div>\n<div class=\"panels\">\n<section class=\"card\">\n<div "
      "class=\"card-head\"><h2>Loss</h2>"
      "<span class=\"aside\"><span class=\"legend\"><i "
      "style=\"background:var(--raw)\"></i>raw</span>"
      "<span class=\"legend\"><i "
      "style=\"background:var(--smooth)\"></i>smoothed</span></span></div>\n"
      "<svg id=\"plot\" role=\"img\" aria-label=\"training loss over global steps\"></svg>\n"
      "<noscript><p>The loss plot needs JavaScript; the figures on this page are as of loading "
      "it.</p></noscript>\n"
      "</section>\n<section class=\"card\">\n<div class=\"card-head\"><h2>Cluster</h2>"
      "<span class=\"aside\" id=\"tasks-summary\">" +
      TaskSummary(m) +
      "</span></div>\n"
      "<table id=\"tasks\">\n<thead><tr><th>Task</th><th>State</th><th>Detail</th></tr></thead>\n"
      "<tbody id=\"tasks-body\">\n" +
      TaskRows(m) +
      "</tbody>\n</table>\n</section>\n</div>\n</main>\n"
      "<script type=\"application/json\" id=\"initial-status\">" +
      ScriptSafeJson(RenderStatusJson(m)) + "</script>\n<script>" + kStatusPageScript +
      "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace pstrain
