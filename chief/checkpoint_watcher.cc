#include "chief/checkpoint_watcher.h"

#include <glog/logging.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "chief/checkpoint.h"

namespace pstrain {

namespace fs = std::filesystem;

int64_t CheckpointStep(const std::string& base) {
  static const std::regex re(R"(model\.ckpt-(\d{1,18}))");
  std::smatch m;
  return std::regex_match(base, m, re) ? std::stoll(m[1]) : -1;
}

StatusOr<std::vector<std::string>> CheckpointWatcher::NewCheckpoints() {
  std::error_code ec;
  if (!fs::exists(dir_, ec)) return std::vector<std::string>{};

  std::set<std::string> names;
  auto state = ReadCheckpointState(dir_);
  if (state.ok()) {
    names.insert(state->kept.begin(), state->kept.end());
    names.insert(state->latest);
  } else if (state.status().code() != Code::kNotFound) {
    LOG(WARNING) << "ignoring the state file: " << state.status().ToString()
                 << "; looking for *.index files";
  }
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& path = it->path();
    if (path.extension() == ".index") names.insert(path.stem().string());
  }
  if (ec) return Unavailable("cannot list train dir " + dir_ + ": " + ec.message());

  std::vector<std::string> fresh;
  for (const std::string& base : names) {
    if (CheckpointStep(base) < 0 || returned_.count(base) > 0) continue;
    if (!fs::exists(dir_ + "/" + base + ".index", ec)) continue;  // deleted, or a name only
    fresh.push_back(base);
  }
  std::sort(fresh.begin(), fresh.end(), [](const std::string& a, const std::string& b) {
    return CheckpointStep(a) < CheckpointStep(b);
  });
  returned_.insert(fresh.begin(), fresh.end());
  return fresh;
}

}  // namespace pstrain
