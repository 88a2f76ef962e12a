#include "deploy/local/task_flags.h"

#include <poll.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include "deploy/local/task_process.h"

namespace pstrain {

namespace {

// The text between <tag> and </tag> from `pos` on; advances `pos` past it.
bool NextElement(const std::string& xml, const std::string& tag, size_t* pos, std::string* out) {
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  const size_t begin = xml.find(open, *pos);
  if (begin == std::string::npos) return false;
  const size_t end = xml.find(close, begin + open.size());
  if (end == std::string::npos) return false;
  *out = xml.substr(begin + open.size(), end - begin - open.size());
  *pos = end + close.size();
  return true;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

StatusOr<FlagSet> ReadBinaryFlags(const std::string& binary) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TaskProcess> p,
                      TaskProcess::Spawn("flags", {binary, "--helpxml"}));
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (p->DrainOutput(&out)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Unavailable(binary + " --helpxml did not end within 60 s");
    }
    pollfd fd = {p->output_fd(), POLLIN, 0};
    ::poll(&fd, 1, 200);
  }
  while (!p->PollExit()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  FlagSet flags;
  size_t pos = 0;
  std::string flag;
  while (NextElement(out, "flag", &pos, &flag)) {
    size_t at = 0;
    std::string name, type;
    if (NextElement(flag, "name", &at, &name) && NextElement(flag, "type", &at, &type)) {
      flags[name] = type == "bool";
    }
  }
  if (flags.empty()) {
    return Unavailable("cannot read the flags of " + binary + " (" + p->exit_description() +
                       "): " + out.substr(0, 500));
  }
  return flags;
}

std::string NearestName(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(name, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

StatusOr<FlagRoute> RouteFlags(const std::vector<std::string>& args,
                               const std::map<std::string, FlagSet>& jobs,
                               const std::vector<std::string>& launcher_flags,
                               const std::map<std::string, std::string>& launcher_sets) {
  FlagRoute route;
  // Every job's flags together: a name is a boolean when any job's is.
  FlagSet any;
  for (const auto& [job, flags] : jobs) {
    route.by_job[job];
    for (const auto& [name, is_bool] : flags) any[name] = any[name] || is_bool;
  }
  auto is_bool = [&](const std::string& n) {
    auto it = any.find(n);
    return it != any.end() && it->second;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    const size_t dashes = arg.rfind("--", 0) == 0 ? 2 : arg.rfind('-', 0) == 0 ? 1 : 0;
    if (dashes == 0 || arg.size() == dashes) {
      return InvalidArgument("unexpected argument '" + arg + "' (flags are --name=value)");
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(dashes, eq == std::string::npos ? eq : eq - dashes);
    // --noname sets a boolean false; only without a value, as gflags has it.
    const bool negated = !any.count(name) && eq == std::string::npos && name.rfind("no", 0) == 0 &&
                         is_bool(name.substr(2));
    const std::string flag = negated ? name.substr(2) : name;
    auto sets = launcher_sets.find(flag);
    if (sets != launcher_sets.end()) {
      return InvalidArgument("--" + flag + " is set by the launcher" +
                             (sets->second.empty() ? "" : ": use " + sets->second));
    }
    if (!any.count(flag)) {
      std::set<std::string> names(launcher_flags.begin(), launcher_flags.end());
      for (const auto& [n, b] : any) names.insert(n);
      return InvalidArgument("no task takes --" + name + "; did you mean --" +
                             NearestName(name, {names.begin(), names.end()}) + "?");
    }
    // "--name value": the value is the next argument, except for a boolean
    // (gflags reads "--sync_replicas false" as the flag and an argument).
    std::string whole = arg.substr(dashes);
    if (eq == std::string::npos && !negated && !is_bool(flag)) {
      if (i + 1 >= args.size()) return InvalidArgument("--" + flag + " needs a value");
      whole += "=" + args[++i];
    }
    for (const auto& [job, flags] : jobs) {
      if (flags.count(flag)) route.by_job[job].push_back("--" + whole);
    }
  }
  return route;
}

}  // namespace pstrain
