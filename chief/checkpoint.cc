#include "chief/checkpoint.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

#include "chief/tf_bundle.h"
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

// pstrain's index beside a TensorFlow bundle.
constexpr char kTfSidecar[] = ".pstrain";

bool IsTfCheckpoint(const std::string& prefix) {
  return std::filesystem::exists(TfBundleDataPath(prefix));
}

// "PSCKPT01", u64 length L, L bytes of the index, u32 masked CRC32C.
std::string IndexFile(const proto::CheckpointIndex& index) {
  const std::string body = index.SerializeAsString();
  std::string file(kIndexMagic, sizeof(kIndexMagic));
  const uint64_t len = body.size();
  file.append(reinterpret_cast<const char*>(&len), sizeof(len));
  file += body;
  const uint32_t crc = crc32c::Mask(crc32c::Value(body.data(), body.size()));
  file.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
  return file;
}

}  // namespace

std::string CheckpointName(int64_t step) { return "model.ckpt-" + std::to_string(step); }

CheckpointWriter::CheckpointWriter(std::string prefix, int64_t step, FileOps* ops)
    : prefix_(std::move(prefix)), ops_(ops) {
  index_.set_global_step(step);
}

CheckpointWriter::~CheckpointWriter() = default;

Status CheckpointWriter::BeginTable(const std::string& name, int dim,
                                    const std::vector<std::string>& slot_names) {
  proto::TableCheckpoint* t = index_.add_tables();
  t->set_name(name);
  t->set_dim(dim);
  for (const std::string& s : slot_names) t->add_slot_names(s);
  return TableBegun(*t);
}

Status CheckpointWriter::AddRows(const proto::RowBlock& block) {
  if (index_.tables_size() == 0) return InvalidArgument("rows before BeginTable");
  proto::TableCheckpoint* t = index_.mutable_tables(index_.tables_size() - 1);
  const uint64_t rows = block.keys().size() / sizeof(int64_t);
  const uint64_t row_bytes = sizeof(float) * t->dim() * (1 + t->slot_names_size());
  if (block.keys().size() % sizeof(int64_t) != 0 ||
      (!block.erase() && block.values().size() != rows * row_bytes) ||
      (block.erase() && !block.values().empty())) {
    return InvalidArgument("rows of embedding table " + t->name() + ": " +
                           std::to_string(block.keys().size()) + " bytes of keys, " +
                           std::to_string(block.values().size()) + " of values");
  }
  if (rows == 0) return OkStatus();
  PS_RETURN_IF_ERROR(RowsAdded(t, block, rows, row_bytes));
  if (!block.erase()) t->set_num_rows(t->num_rows() + static_cast<int64_t>(rows));
  return OkStatus();
}

uint32_t CheckpointWriter::BlockCrc(const proto::RowBlock& block) {
  return crc32c::Extend(crc32c::Value(block.keys().data(), block.keys().size()),
                        block.values().data(), block.values().size());
}

Status CheckpointWriter::AppendToRowsFile(proto::TableCheckpoint* t, const proto::RowBlock& block,
                                          uint64_t rows) {
  if (rows_ == nullptr) {
    PS_ASSIGN_OR_RETURN(rows_, AtomicFile::Create(prefix_ + ".rows", ops_));
    index_.set_rows_file(BaseName(prefix_) + ".rows");
  }
  PS_RETURN_IF_ERROR(rows_->Append(block.keys().data(), block.keys().size()));
  PS_RETURN_IF_ERROR(rows_->Append(block.values().data(), block.values().size()));
  proto::RowBlockEntry* e = t->add_blocks();
  e->set_offset(rows_bytes_);
  e->set_rows(static_cast<int64_t>(rows));
  e->set_erase(block.erase());
  e->set_crc32c(BlockCrc(block));
  rows_bytes_ += block.keys().size() + block.values().size();
  return OkStatus();
}

Status CheckpointWriter::CommitRows() {
  index_.set_rows_bytes(rows_bytes_);
  return rows_ != nullptr ? rows_->Commit() : OkStatus();
}

namespace {

// pstrain's format: the tensors back to back in "<prefix>.data", each
// with its CRC32C in the index.
class PstrainCheckpointWriter : public CheckpointWriter {
 public:
  PstrainCheckpointWriter(std::string prefix, int64_t step, FileOps* ops,
                          std::unique_ptr<AtomicFile> data)
      : CheckpointWriter(std::move(prefix), step, ops), data_(std::move(data)) {
    index_.set_data_file(BaseName(prefix_) + ".data");
  }

  Status AddTensor(const std::string& name, const Tensor& t) override {
    PS_RETURN_IF_ERROR(data_->Append(t.data(), t.bytes()));
    proto::CheckpointEntry* e = index_.add_entries();
    e->set_name(name);
    e->mutable_meta()->set_dtype(proto::DT_FLOAT);
    for (int64_t d : t.shape()) e->mutable_meta()->add_shape(d);
    e->set_offset(data_bytes_);
    e->set_size(t.bytes());
    e->set_crc32c(crc32c::Value(t.data(), t.bytes()));
    data_bytes_ += t.bytes();
    return OkStatus();
  }

  StatusOr<std::string> Finish() override {
    index_.set_data_bytes(data_bytes_);
    PS_RETURN_IF_ERROR(data_->Commit());
    PS_RETURN_IF_ERROR(CommitRows());
    PS_RETURN_IF_ERROR(WriteFileAtomically(prefix_ + ".index", IndexFile(index_), ops_));
    return prefix_;
  }

 private:
  Status TableBegun(const proto::TableCheckpoint&) override { return OkStatus(); }
  Status RowsAdded(proto::TableCheckpoint* t, const proto::RowBlock& block, uint64_t rows,
                   uint64_t) override {
    return AppendToRowsFile(t, block, rows);
  }

  std::unique_ptr<AtomicFile> data_;
  uint64_t data_bytes_ = 0;
};

// TensorFlow's format: a tensor bundle under TF's names, each full
// table's keys and values in it too, and pstrain's index beside it.
class TfCheckpointWriter : public CheckpointWriter {
 public:
  TfCheckpointWriter(std::string prefix, int64_t step, FileOps* ops,
                     std::unique_ptr<TfBundleWriter> bundle, TfNameFn tf_name)
      : CheckpointWriter(std::move(prefix), step, ops),
        bundle_(std::move(bundle)),
        tf_name_(std::move(tf_name)) {}

  Status AddTensor(const std::string& name, const Tensor& t) override {
    const std::string tf = tf_name_ ? tf_name_(name) : name;
    if (tf != name) (*index_.mutable_tf_names())[tf] = name;
    return bundle_->AddFloat(tf, t);
  }

  StatusOr<std::string> Finish() override {
    PS_RETURN_IF_ERROR(CommitRows());
    PS_RETURN_IF_ERROR(EndTableTensors());
    PS_RETURN_IF_ERROR(bundle_->AddInt64("global_step", {}, {index_.global_step()}));
    PS_RETURN_IF_ERROR(WriteFileAtomically(prefix_ + kTfSidecar, IndexFile(index_), ops_));
    PS_RETURN_IF_ERROR(bundle_->Finish());
    return prefix_;
  }

 private:
  // A spool: a temporary file holding one of the streamed table's tensors
  // (its keys, or a slot's values) until the values tensor ends.
  using SpoolFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

  // A full checkpoint's table streams into the bundle: its values straight
  // in, its keys and each slot's values spooled.
  Status TableBegun(const proto::TableCheckpoint& table) override {
    PS_RETURN_IF_ERROR(EndTableTensors());
    if (index_.has_delta_base_step()) return OkStatus();
    streamed_ = index_.tables_size() - 1;
    streamed_rows_ = 0;
    spools_.clear();
    for (int s = 0; s <= table.slot_names_size(); ++s) {
      spools_.emplace_back(std::tmpfile(), &std::fclose);
      if (spools_.back() == nullptr) {
        return Unavailable("no temporary file for embedding table " + table.name() + ": " +
                           std::strerror(errno));
      }
    }
    index_.mutable_tables(streamed_)->mutable_bundle_rows()->set_values_offset(bundle_->offset());
    return bundle_->BeginTensor(table.name() + "-values", tensorflow::DT_FLOAT);
  }

  // A delta's rows go to the rows file; a full table's rows are split into
  // the bundle's tensors, each block's place and CRC32C in the index.
  Status RowsAdded(proto::TableCheckpoint* t, const proto::RowBlock& block, uint64_t rows,
                   uint64_t row_bytes) override {
    if (streamed_ < 0) return AppendToRowsFile(t, block, rows);
    if (block.erase()) {
      return InvalidArgument("embedding table " + t->name() +
                             ": erased keys in a full checkpoint's rows");
    }
    proto::RowBlockEntry* e = t->add_blocks();
    e->set_offset(static_cast<uint64_t>(streamed_rows_));
    e->set_rows(static_cast<int64_t>(rows));
    e->set_crc32c(BlockCrc(block));
    streamed_rows_ += static_cast<int64_t>(rows);
    PS_RETURN_IF_ERROR(Spool(0, block.keys().data(), block.keys().size(), *t));
    const size_t part = sizeof(float) * t->dim();
    std::string values(rows * part, '\0');
    for (int s = 0; s <= t->slot_names_size(); ++s) {
      for (uint64_t r = 0; r < rows; ++r) {
        std::memcpy(&values[r * part], block.values().data() + r * row_bytes + s * part, part);
      }
      PS_RETURN_IF_ERROR(s == 0 ? bundle_->AppendToTensor(values.data(), values.size())
                                : Spool(s, values.data(), values.size(), *t));
    }
    return OkStatus();
  }

  Status Spool(int which, const void* bytes, size_t n, const proto::TableCheckpoint& t) {
    if (std::fwrite(bytes, 1, n, spools_[which].get()) == n) return OkStatus();
    return Unavailable("spooling the rows of embedding table " + t.name() +
                       " failed: " + std::strerror(errno));
  }

  // Ends the streamed table's values, then writes its keys and each slot's
  // values from their spools.
  Status EndTableTensors() {
    if (streamed_ < 0) return OkStatus();
    proto::TableCheckpoint* t = index_.mutable_tables(streamed_);
    streamed_ = -1;
    PS_RETURN_IF_ERROR(bundle_->EndTensor({streamed_rows_, t->dim()}));
    t->mutable_bundle_rows()->set_keys_offset(bundle_->offset());
    PS_RETURN_IF_ERROR(Unspool(0, t->name() + "-keys", tensorflow::DT_INT64, {streamed_rows_}));
    for (int s = 0; s < t->slot_names_size(); ++s) {
      t->mutable_bundle_rows()->add_slot_offsets(bundle_->offset());
      PS_RETURN_IF_ERROR(Unspool(s + 1, t->name() + "/" + t->slot_names(s) + "-values",
                                 tensorflow::DT_FLOAT, {streamed_rows_, t->dim()}));
    }
    spools_.clear();
    return OkStatus();
  }

  Status Unspool(int which, const std::string& name, tensorflow::DataType dtype,
                 const Shape& shape) {
    std::FILE* spool = spools_[which].get();
    PS_RETURN_IF_ERROR(bundle_->BeginTensor(name, dtype));
    std::rewind(spool);
    std::vector<char> chunk(1 << 20);
    for (size_t n; (n = std::fread(chunk.data(), 1, chunk.size(), spool)) > 0;) {
      PS_RETURN_IF_ERROR(bundle_->AppendToTensor(chunk.data(), n));
    }
    if (std::ferror(spool) != 0) return Unavailable("reading back " + name + " failed");
    return bundle_->EndTensor(shape);
  }

  std::unique_ptr<TfBundleWriter> bundle_;
  const TfNameFn tf_name_;
  // The table streaming into the bundle (its place in the index; -1:
  // none), its rows so far, and its spools: the keys, then each slot's.
  int streamed_ = -1;
  int64_t streamed_rows_ = 0;
  std::vector<SpoolFile> spools_;
};

}  // namespace

StatusOr<std::unique_ptr<CheckpointWriter>> CheckpointWriter::Create(
    const std::string& dir, int64_t step, CheckpointFormat format, TfNameFn tf_name, FileOps* ops) {
  const std::string prefix = dir + "/" + CheckpointName(step);
  if (format == CheckpointFormat::kTensorFlow) {
    PS_ASSIGN_OR_RETURN(auto bundle, TfBundleWriter::Create(prefix, ops));
    return std::unique_ptr<CheckpointWriter>(
        new TfCheckpointWriter(prefix, step, ops, std::move(bundle), std::move(tf_name)));
  }
  PS_ASSIGN_OR_RETURN(auto data, AtomicFile::Create(prefix + ".data", ops));
  return std::unique_ptr<CheckpointWriter>(
      new PstrainCheckpointWriter(prefix, step, ops, std::move(data)));
}

StatusOr<std::string> WriteCheckpoint(
    const std::string& dir, int64_t step,
    const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  PS_ASSIGN_OR_RETURN(auto writer, CheckpointWriter::Create(dir, step));
  for (const auto& [name, t] : tensors) PS_RETURN_IF_ERROR(writer->AddTensor(name, *t));
  return writer->Finish();
}

TableRowsReader::TableRowsReader(std::string path, const proto::TableCheckpoint& table,
                                 uint64_t file_bytes)
    : path_(std::move(path)),
      table_(table),
      file_bytes_(file_bytes),
      in_(path_, std::ios::binary) {}

StatusOr<std::unique_ptr<TableRowsReader>> TableRowsReader::Open(
    const std::string& prefix, const proto::TableCheckpoint& table) {
  const std::string path = table.has_bundle_rows() ? TfBundleDataPath(prefix) : prefix + ".rows";
  std::error_code ec;
  const uint64_t bytes = table.blocks().empty() ? 0 : std::filesystem::file_size(path, ec);
  if (ec) return DataLoss(path + ": " + ec.message());
  std::unique_ptr<TableRowsReader> r(new TableRowsReader(path, table, bytes));
  if (!table.blocks().empty() && !r->in_) return DataLoss(path + ": cannot be opened");
  return r;
}

StatusOr<bool> TableRowsReader::Next(proto::RowBlock* block) {
  if (next_ == table_.blocks_size()) return false;
  const proto::RowBlockEntry& e = table_.blocks(next_);
  const std::string where =
      path_ + ": block " + std::to_string(next_) + " of embedding table " + table_.name();
  ++next_;
  // Every number here comes from the file: checked before anything is
  // allocated for it.
  const uint64_t row_floats =
      static_cast<uint64_t>(std::max(table_.dim(), 0)) * (1 + table_.slot_names_size());
  constexpr uint64_t kMaxRows = uint64_t{1} << 24;
  if (e.rows() < 0 || static_cast<uint64_t>(e.rows()) > kMaxRows || row_floats > (1u << 20)) {
    return DataLoss(where + ": " + std::to_string(e.rows()) + " rows is out of range");
  }
  const uint64_t key_bytes = static_cast<uint64_t>(e.rows()) * sizeof(int64_t);
  const uint64_t value_bytes =
      e.erase() ? 0 : static_cast<uint64_t>(e.rows()) * row_floats * sizeof(float);
  if (!table_.has_bundle_rows() &&
      (e.offset() > file_bytes_ || key_bytes + value_bytes > file_bytes_ - e.offset())) {
    return DataLoss(where + " lies outside the file (truncated?)");
  }
  block->Clear();
  block->set_table(table_.name());
  block->set_erase(e.erase());
  std::string* keys = block->mutable_keys();
  std::string* values = block->mutable_values();
  keys->resize(key_bytes);
  values->resize(value_bytes);
  if (table_.has_bundle_rows()) {
    PS_RETURN_IF_ERROR(ReadFromBundle(e, where, keys, values));
  } else {
    in_.seekg(static_cast<std::streamoff>(e.offset()));
    in_.read(keys->data(), static_cast<std::streamsize>(key_bytes));
    in_.read(values->data(), static_cast<std::streamsize>(value_bytes));
    if (!in_) return DataLoss(where + ": read failed");
  }
  const uint32_t crc =
      crc32c::Extend(crc32c::Value(keys->data(), keys->size()), values->data(), values->size());
  if (!crc32c::Matches(e.crc32c(), crc)) return DataLoss(where + ": CRC32C mismatch");
  return true;
}

Status TableRowsReader::ReadFromBundle(const proto::RowBlockEntry& e, const std::string& where,
                                       std::string* keys, std::string* values) {
  const proto::BundleRows& at = table_.bundle_rows();
  if (at.slot_offsets_size() != table_.slot_names_size() || e.erase()) {
    return DataLoss(where + ": the index's bundle rows do not match the table's slots");
  }
  const uint64_t rows = static_cast<uint64_t>(e.rows());
  const uint64_t part = sizeof(float) * static_cast<uint64_t>(table_.dim());
  // Reads n bytes at `start` + `skip`, each number from the file checked
  // against the file's length first.
  auto read = [&](uint64_t start, uint64_t skip, uint64_t n, char* out) -> Status {
    if (start > file_bytes_ || skip > file_bytes_ - start || n > file_bytes_ - start - skip) {
      return DataLoss(where + " lies outside the bundle's data file (truncated?)");
    }
    in_.seekg(static_cast<std::streamoff>(start + skip));
    in_.read(out, static_cast<std::streamsize>(n));
    return in_ ? OkStatus() : DataLoss(where + ": read failed");
  };
  if (e.offset() > (uint64_t{1} << 40)) return DataLoss(where + ": first row out of range");
  PS_RETURN_IF_ERROR(
      read(at.keys_offset(), e.offset() * sizeof(int64_t), keys->size(), keys->data()));
  // A row is its values then each slot's, as the ps sent it.
  std::string column(rows * part, '\0');
  const uint64_t row_bytes = part * (1 + table_.slot_names_size());
  for (int s = 0; s <= table_.slot_names_size(); ++s) {
    const uint64_t start = s == 0 ? at.values_offset() : at.slot_offsets(s - 1);
    PS_RETURN_IF_ERROR(read(start, e.offset() * part, column.size(), column.data()));
    for (uint64_t r = 0; r < rows; ++r) {
      std::memcpy(values->data() + r * row_bytes + s * part, column.data() + r * part, part);
    }
  }
  return OkStatus();
}

StatusOr<proto::CheckpointIndex> ReadCheckpointIndex(const std::string& prefix) {
  const std::string index_path = prefix + (IsTfCheckpoint(prefix) ? kTfSidecar : ".index");
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
  return index;
}

namespace {

// The index's tables, delta base and rows file into *ckpt; DataLoss when
// the rows file is not as long as the index says.
Status AttachTables(const proto::CheckpointIndex& index, const std::string& prefix,
                    Checkpoint* ckpt) {
  ckpt->tables.assign(index.tables().begin(), index.tables().end());
  if (index.has_delta_base_step()) ckpt->delta_base_step = index.delta_base_step();
  if (index.tables_size() > 0 && !index.rows_file().empty()) {
    const std::string rows_path = prefix + ".rows";
    std::error_code ec;
    const uint64_t rows_bytes = std::filesystem::file_size(rows_path, ec);
    if (ec || rows_bytes != index.rows_bytes()) {
      return DataLoss(rows_path + ": holds " + (ec ? ec.message() : std::to_string(rows_bytes)) +
                      " bytes, index says " + std::to_string(index.rows_bytes()) + " (truncated?)");
    }
  }
  return OkStatus();
}

// A TensorFlow checkpoint: its float tensors, its global_step (an int64
// scalar; 0 without one); with pstrain's index beside it, the tensors under
// pstrain's names and the tables.
StatusOr<Checkpoint> ReadTfCheckpoint(const std::string& prefix) {
  proto::CheckpointIndex index;
  if (std::filesystem::exists(prefix + kTfSidecar)) {
    PS_ASSIGN_OR_RETURN(index, ReadCheckpointIndex(prefix));
  }
  // The tables' tensors stay in the file: a restore streams their rows
  // block by block.
  std::set<std::string> tables;
  for (const proto::TableCheckpoint& t : index.tables()) {
    tables.insert(t.name() + "-keys");
    tables.insert(t.name() + "-values");
    for (const std::string& slot : t.slot_names()) tables.insert(t.name() + "/" + slot + "-values");
  }
  PS_ASSIGN_OR_RETURN(auto bundle, ReadTfBundle(prefix, [&tables](const std::string& name) {
                        return tables.count(name) > 0;
                      }));
  Checkpoint ckpt;
  ckpt.prefix = prefix;
  for (auto& [name, t] : bundle) {
    if (t.dtype == tensorflow::DT_FLOAT) {
      auto renamed = index.tf_names().find(name);
      ckpt.tensors.emplace(renamed == index.tf_names().end() ? name : renamed->second,
                           std::move(t.floats));
    } else if (name == "global_step" && t.int64s.size() == 1) {
      ckpt.global_step = t.int64s[0];
    }
  }
  PS_RETURN_IF_ERROR(AttachTables(index, prefix, &ckpt));
  return ckpt;
}

}  // namespace

StatusOr<Checkpoint> ReadCheckpoint(const std::string& prefix) {
  if (IsTfCheckpoint(prefix)) return ReadTfCheckpoint(prefix);
  const std::string index_path = prefix + ".index";
  PS_ASSIGN_OR_RETURN(proto::CheckpointIndex index, ReadCheckpointIndex(prefix));
  const std::string data_path = prefix + ".data";
  PS_ASSIGN_OR_RETURN(std::string data, ReadFileToString(data_path));
  if (data.size() != index.data_bytes()) {
    return DataLoss(data_path + ": holds " + std::to_string(data.size()) + " bytes, index says " +
                    std::to_string(index.data_bytes()) + " (truncated?)");
  }
  Checkpoint ckpt;
  ckpt.global_step = index.global_step();
  ckpt.prefix = prefix;
  PS_RETURN_IF_ERROR(AttachTables(index, prefix, &ckpt));
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

Status WriteCheckpointState(const std::string& dir, const CheckpointState& state, FileOps* ops) {
  std::string text = "model_checkpoint_path: " + Quote(state.latest) + "\n";
  for (const std::string& k : state.kept) text += "all_model_checkpoint_paths: " + Quote(k) + "\n";
  return WriteFileAtomically(dir + "/checkpoint", text, ops);
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
