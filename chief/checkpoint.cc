#include "chief/checkpoint.h"

#include <cstring>
#include <sstream>

#include "core/atomic_file.h"
#include "core/crc32c.h"
#include "proto/checkpoint.pb.h"

namespace pstrain {
namespace {

constexpr char kIndexMagic[8] = {'P', 'S', 'C', 'K', 'P', 'T', '0', '1'};

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Quote(const std::string& s) { return "\"" + s + "\""; }

}  // namespace

std::string CheckpointName(int64_t step) { return "model.ckpt-" + std::to_string(step); }

StatusOr<std::string> WriteCheckpoint(
    const std::string& dir, int64_t step,
    const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  const std::string prefix = dir + "/" + CheckpointName(step);
  proto::CheckpointIndex index;
  index.set_global_step(step);
  index.set_data_file(BaseName(prefix) + ".data");
  {
    PS_ASSIGN_OR_RETURN(auto data, AtomicFile::Create(prefix + ".data"));
    uint64_t offset = 0;
    for (const auto& [name, t] : tensors) {
      PS_RETURN_IF_ERROR(data->Append(t->data(), t->bytes()));
      proto::CheckpointEntry* e = index.add_entries();
      e->set_name(name);
      e->mutable_meta()->set_dtype(proto::DT_FLOAT);
      for (int64_t d : t->shape()) e->mutable_meta()->add_shape(d);
      e->set_offset(offset);
      e->set_size(t->bytes());
      e->set_crc32c(crc32c::Value(t->data(), t->bytes()));
      offset += t->bytes();
    }
    index.set_data_bytes(offset);
    PS_RETURN_IF_ERROR(data->Commit());
  }
  const std::string body = index.SerializeAsString();
  std::string file(kIndexMagic, sizeof(kIndexMagic));
  const uint64_t len = body.size();
  file.append(reinterpret_cast<const char*>(&len), sizeof(len));
  file += body;
  const uint32_t crc = crc32c::Mask(crc32c::Value(body.data(), body.size()));
  file.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
  PS_RETURN_IF_ERROR(WriteFileAtomically(prefix + ".index", file));
  return prefix;
}

StatusOr<Checkpoint> ReadCheckpoint(const std::string& prefix) {
  const std::string index_path = prefix + ".index";
  PS_ASSIGN_OR_RETURN(std::string file, ReadFileToString(index_path));
  if (file.size() < sizeof(kIndexMagic) + 12 ||
      std::memcmp(file.data(), kIndexMagic, sizeof(kIndexMagic)) != 0) {
    return DataLoss(index_path + ": not a pstrain checkpoint index (bad magic or too short)");
  }
  uint64_t len = 0;
  std::memcpy(&len, file.data() + 8, sizeof(len));
  if (len != file.size() - 8 - 8 - 4) {
    return DataLoss(index_path + ": truncated or padded (index says " + std::to_string(len) +
                    " bytes, file holds " + std::to_string(file.size() - 20) + ")");
  }
  uint32_t stored = 0;
  std::memcpy(&stored, file.data() + 16 + len, sizeof(stored));
  if (!crc32c::Matches(crc32c::Unmask(stored), crc32c::Value(file.data() + 16, len))) {
    return DataLoss(index_path + ": CRC32C mismatch in the index");
  }
  proto::CheckpointIndex index;
  if (!index.ParseFromArray(file.data() + 16, static_cast<int>(len))) {
    return DataLoss(index_path + ": index does not parse");
  }
  const std::string data_path = prefix + ".data";
  PS_ASSIGN_OR_RETURN(std::string data, ReadFileToString(data_path));
  if (data.size() != index.data_bytes()) {
    return DataLoss(data_path + ": holds " + std::to_string(data.size()) + " bytes, index says " +
                    std::to_string(index.data_bytes()) + " (truncated?)");
  }
  Checkpoint ckpt;
  ckpt.global_step = index.global_step();
  for (const proto::CheckpointEntry& e : index.entries()) {
    Shape shape(e.meta().shape().begin(), e.meta().shape().end());
    // Every number here comes from the file: the shape is checked before
    // anything is allocated for it, and the extent without overflow.
    auto elements = CheckedNumElements(shape);
    if (!elements.ok()) {
      return DataLoss(index_path + ": tensor " + e.name() + ": " + elements.status().message());
    }
    const uint64_t bytes = static_cast<uint64_t>(*elements) * sizeof(float);
    if (e.size() != bytes || e.offset() > data.size() || e.size() > data.size() - e.offset()) {
      return DataLoss(data_path + ": tensor " + e.name() + " lies outside the file");
    }
    Tensor t(shape, Tensor::kUninitialized);
    if (bytes > 0) std::memcpy(t.data(), data.data() + e.offset(), bytes);
    if (!crc32c::Matches(e.crc32c(), crc32c::Value(t.data(), t.bytes()))) {
      return DataLoss(data_path + ": CRC32C mismatch in tensor " + e.name());
    }
    ckpt.tensors.emplace(e.name(), std::move(t));
  }
  return ckpt;
}

Status WriteCheckpointState(const std::string& dir, const CheckpointState& state) {
  std::string text = "model_checkpoint_path: " + Quote(state.latest) + "\n";
  for (const std::string& k : state.kept) text += "all_model_checkpoint_paths: " + Quote(k) + "\n";
  return WriteFileAtomically(dir + "/checkpoint", text);
}

StatusOr<CheckpointState> ReadCheckpointState(const std::string& dir) {
  PS_ASSIGN_OR_RETURN(std::string text, ReadFileToString(dir + "/checkpoint"));
  CheckpointState state;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    size_t q1 = line.find('"');
    size_t q2 = line.rfind('"');
    if (colon == std::string::npos || q1 == std::string::npos || q2 <= q1) {
      return DataLoss(dir + "/checkpoint: malformed line '" + line + "'");
    }
    const std::string key = line.substr(0, colon), value = line.substr(q1 + 1, q2 - q1 - 1);
    if (key == "model_checkpoint_path") {
      state.latest = value;
    } else if (key == "all_model_checkpoint_paths") {
      state.kept.push_back(value);
    }
  }
  if (state.latest.empty()) return DataLoss(dir + "/checkpoint: no model_checkpoint_path");
  return state;
}

}  // namespace pstrain
