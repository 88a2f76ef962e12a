#include "chief/checkpoint_manager.h"

#include <glog/logging.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

namespace pstrain {
namespace {

int64_t StepOf(const std::string& base) {
  static const std::regex re(R"(model\.ckpt-(\d+))");
  std::smatch m;
  return std::regex_match(base, m, re) ? std::stoll(m[1]) : -1;
}

}  // namespace

CheckpointManager::CheckpointManager(Options options)
    : options_(std::move(options)), last_preserved_(std::chrono::system_clock::now()) {
  auto state = ReadCheckpointState(options_.dir);
  if (state.ok()) kept_ = state->kept;
}

StatusOr<std::string> CheckpointManager::Save(int64_t step,
                                              const std::map<std::string, Tensor>& tensors,
                                              const AddTables& add_tables,
                                              std::optional<int64_t> delta_base) {
  PS_ASSIGN_OR_RETURN(
      auto writer, CheckpointWriter::Create(options_.dir, step, format_, tf_name_, options_.files));
  for (const auto& [name, t] : tensors) PS_RETURN_IF_ERROR(writer->AddTensor(name, t));
  if (delta_base) writer->SetDeltaBase(*delta_base);
  if (add_tables) PS_RETURN_IF_ERROR(add_tables(writer.get()));
  PS_ASSIGN_OR_RETURN(std::string prefix, writer->Finish());
  const std::string base = CheckpointName(step);
  kept_.erase(std::remove(kept_.begin(), kept_.end(), base), kept_.end());
  kept_.push_back(base);
  std::vector<std::string> dropped;
  while (static_cast<int>(kept_.size()) > std::max(1, options_.max_to_keep)) {
    dropped.push_back(kept_.front());
    kept_.erase(kept_.begin());
  }
  PS_RETURN_IF_ERROR(WriteCheckpointState(options_.dir, {base, kept_}, options_.files));
  // Only once the state file no longer names them are old checkpoints
  // deleted, and a full one only once no kept delta needs it.
  std::set<std::string> needed;
  for (const std::string& kept : kept_) {
    if (auto full = DeltaBaseOf(kept)) needed.insert(CheckpointName(*full));
  }
  dropped.insert(dropped.end(), needed_.begin(), needed_.end());
  needed_.clear();
  const auto now = std::chrono::system_clock::now();
  for (const std::string& old : dropped) {
    if (needed.count(old)) {
      needed_.push_back(old);
      continue;
    }
    if (std::find(kept_.begin(), kept_.end(), old) != kept_.end()) continue;
    if (now - last_preserved_ >=
        std::chrono::duration<double, std::ratio<3600>>(options_.keep_every_n_hours)) {
      last_preserved_ = now;  // kept for good, as TF's keep_checkpoint_every_n_hours
      continue;
    }
    DeleteCheckpoint(old);
  }
  latest_step_ = step;
  return prefix;
}

void CheckpointManager::DeleteCheckpoint(const std::string& base) {
  std::error_code ec;
  // The index first: a checkpoint without one is no checkpoint.
  for (const char* ext : {".index", ".data", ".data-00000-of-00001", ".pstrain", ".rows"}) {
    std::filesystem::remove(options_.dir + "/" + base + ext, ec);
  }
}

std::vector<std::string> CheckpointManager::Candidates() const {
  std::vector<std::string> bases = kept_;
  // Also any checkpoint on disk that the state file does not name (a crash
  // between writing a checkpoint and the state file, or a lost state file).
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".index") == 0) {
      const std::string base = name.substr(0, name.size() - 6);
      if (StepOf(base) >= 0 && std::find(bases.begin(), bases.end(), base) == bases.end()) {
        bases.push_back(base);
      }
    }
  }
  std::sort(bases.begin(), bases.end(),
            [](const std::string& a, const std::string& b) { return StepOf(a) > StepOf(b); });
  return bases;
}

std::optional<int64_t> CheckpointManager::DeltaBaseOf(const std::string& base) const {
  // Only the index is read: the variables and rows are not needed here.
  auto index = ReadCheckpointIndex(options_.dir + "/" + base);
  if (!index.ok() || !index->has_delta_base_step()) return std::nullopt;
  return index->delta_base_step();
}

StatusOr<Checkpoint> CheckpointManager::LoadLatest(Checkpoint* full) {
  for (const std::string& base : Candidates()) {
    auto ckpt = ReadCheckpoint(options_.dir + "/" + base);
    if (ckpt.ok() && ckpt->delta_base_step) {
      auto of = ReadCheckpoint(options_.dir + "/" + CheckpointName(*ckpt->delta_base_step));
      if (!of.ok() || of->delta_base_step) {
        LOG(ERROR) << "skipping delta checkpoint " << base << ": its full checkpoint "
                   << CheckpointName(*ckpt->delta_base_step) << " does not read back ("
                   << (of.ok() ? "a delta itself" : of.status().ToString()) << ")";
        continue;
      }
      if (full != nullptr) *full = std::move(of).value();
    }
    if (ckpt.ok()) {
      latest_step_ = ckpt->global_step;
      return ckpt;
    }
    LOG(ERROR) << "skipping checkpoint " << base << ": " << ckpt.status().ToString();
  }
  return NotFound("no readable checkpoint in " + options_.dir);
}

}  // namespace pstrain
