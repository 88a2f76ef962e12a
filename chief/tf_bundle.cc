#include "chief/tf_bundle.h"

#include <leveldb/env.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/table.h>
#include <leveldb/table_builder.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/crc32c.h"

namespace pstrain {
namespace {

// The index is small (an entry per tensor): it is built in memory and
// written through AtomicFile, read whole, then parsed.
class StringSink : public leveldb::WritableFile {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  leveldb::Status Append(const leveldb::Slice& data) override {
    out_->append(data.data(), data.size());
    return leveldb::Status::OK();
  }
  leveldb::Status Close() override { return leveldb::Status::OK(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return leveldb::Status::OK(); }

 private:
  std::string* const out_;
};

class StringSource : public leveldb::RandomAccessFile {
 public:
  explicit StringSource(const std::string& data) : data_(data) {}
  leveldb::Status Read(uint64_t offset, size_t n, leveldb::Slice* result,
                       char* /*scratch*/) const override {
    if (offset > data_.size()) return leveldb::Status::Corruption("read past the end");
    *result = leveldb::Slice(data_.data() + offset, std::min<uint64_t>(n, data_.size() - offset));
    return leveldb::Status::OK();
  }

 private:
  const std::string& data_;
};

leveldb::Options TableOptions() {
  leveldb::Options options;
  options.compression = leveldb::kNoCompression;
  options.paranoid_checks = true;  // the index block's CRC is checked before it is used
  return options;
}

bool ReadVarint64(const std::string& s, size_t* pos, uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && *pos < s.size(); shift += 7) {
    const uint8_t b = static_cast<uint8_t>(s[(*pos)++]);
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Whether the table's footer (its last 48 bytes: the metaindex and index
// blocks' handles, then LevelDB's magic number) points inside the table.
// LevelDB allocates a block's claimed size before it reads it: a damaged
// footer must not reach it. The blocks the index points to are read only
// once the index block's CRC32C has been checked.
bool FooterFits(const std::string& table) {
  constexpr size_t kFooter = 48, kTrailer = 5;
  constexpr uint64_t kMagic = 0xdb4775248b80fb57ull;
  if (table.size() < kFooter) return false;
  uint64_t magic = 0;
  std::memcpy(&magic, table.data() + table.size() - 8, sizeof(magic));
  if (magic != kMagic) return false;
  const std::string footer = table.substr(table.size() - kFooter, kFooter - 8);
  size_t pos = 0;
  for (int block = 0; block < 2; ++block) {
    uint64_t offset = 0, size = 0;
    if (!ReadVarint64(footer, &pos, &offset) || !ReadVarint64(footer, &pos, &size)) return false;
    const uint64_t limit = table.size() - kFooter;
    if (offset > limit || size > limit - offset || size + kTrailer > limit - offset) return false;
  }
  return true;
}

size_t BytesPer(tensorflow::DataType dtype) { return dtype == tensorflow::DT_FLOAT ? 4 : 8; }

}  // namespace

std::string TfBundleIndexPath(const std::string& prefix) { return prefix + ".index"; }
std::string TfBundleDataPath(const std::string& prefix) { return prefix + ".data-00000-of-00001"; }

StatusOr<std::unique_ptr<TfBundleWriter>> TfBundleWriter::Create(const std::string& prefix,
                                                                 FileOps* ops) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<AtomicFile> data,
                      AtomicFile::Create(TfBundleDataPath(prefix), ops));
  return std::unique_ptr<TfBundleWriter>(new TfBundleWriter(prefix, std::move(data), ops));
}

TfBundleWriter::TfBundleWriter(std::string prefix, std::unique_ptr<AtomicFile> data, FileOps* ops)
    : prefix_(std::move(prefix)), data_(std::move(data)), ops_(ops) {}

Status TfBundleWriter::AddFloat(const std::string& name, const Tensor& tensor) {
  return AddBytes(name, tensorflow::DT_FLOAT, tensor.shape(), tensor.data(),
                  static_cast<size_t>(tensor.size()) * sizeof(float));
}

Status TfBundleWriter::AddInt64(const std::string& name, const Shape& shape,
                                const std::vector<int64_t>& values) {
  if (static_cast<int64_t>(values.size()) != NumElements(shape)) {
    return InvalidArgument("tensor " + name + ": " + std::to_string(values.size()) +
                           " values for shape " + ShapeString(shape));
  }
  return AddBytes(name, tensorflow::DT_INT64, shape, values.data(),
                  values.size() * sizeof(int64_t));
}

Status TfBundleWriter::AddBytes(const std::string& name, tensorflow::DataType dtype,
                                const Shape& shape, const void* bytes, size_t n) {
  PS_RETURN_IF_ERROR(BeginTensor(name, dtype));
  PS_RETURN_IF_ERROR(AppendToTensor(bytes, n));
  return EndTensor(shape);
}

Status TfBundleWriter::BeginTensor(const std::string& name, tensorflow::DataType dtype) {
  if (streaming_ != nullptr) return InvalidArgument("tensor " + name + " added while streaming");
  if (name.empty()) return InvalidArgument("a tensor needs a name (\"\" is the header's key)");
  if (entries_.count(name) > 0) return InvalidArgument("tensor " + name + " added twice");
  streaming_ = &entries_[name];
  streaming_->set_dtype(dtype);
  streaming_->set_offset(offset_);
  streaming_crc_ = 0;
  return OkStatus();
}

Status TfBundleWriter::AppendToTensor(const void* bytes, size_t n) {
  if (streaming_ == nullptr) return InvalidArgument("bytes appended to no tensor");
  streaming_crc_ = crc32c::Extend(streaming_crc_, bytes, n);
  PS_RETURN_IF_ERROR(data_->Append(bytes, n));
  offset_ += static_cast<int64_t>(n);
  return OkStatus();
}

Status TfBundleWriter::EndTensor(const Shape& shape) {
  if (streaming_ == nullptr) return InvalidArgument("no tensor to end");
  tensorflow::BundleEntryProto* entry = streaming_;
  streaming_ = nullptr;
  PS_ASSIGN_OR_RETURN(const int64_t count, CheckedNumElements(shape));
  const int64_t size = offset_ - entry->offset();
  if (size != count * static_cast<int64_t>(BytesPer(entry->dtype()))) {
    return InvalidArgument(std::to_string(size) + " bytes streamed for a tensor of shape " +
                           ShapeString(shape));
  }
  for (int64_t d : shape) entry->mutable_shape()->add_dim()->set_size(d);
  entry->set_size(size);
  entry->set_crc32c(crc32c::Mask(streaming_crc_));
  return OkStatus();
}

Status TfBundleWriter::Finish() {
  if (streaming_ != nullptr) return InvalidArgument("a streamed tensor was not ended");
  PS_RETURN_IF_ERROR(data_->Commit());
  std::string index;
  StringSink sink(&index);
  leveldb::TableBuilder builder(TableOptions(), &sink);
  tensorflow::BundleHeaderProto header;
  header.set_num_shards(1);
  header.set_endianness(tensorflow::BundleHeaderProto::LITTLE);
  header.mutable_version()->set_producer(1);
  builder.Add("", header.SerializeAsString());  // "" sorts first
  for (const auto& [name, entry] : entries_) builder.Add(name, entry.SerializeAsString());
  const leveldb::Status built = builder.Finish();
  if (!built.ok())
    return Internal("building " + TfBundleIndexPath(prefix_) + ": " + built.ToString());
  return WriteFileAtomically(TfBundleIndexPath(prefix_), index, ops_);
}

namespace {

// An entry's dtype and shape, once it is one pstrain reads (float32, int64
// or string, not sliced) and its bytes lie in the data file as its shape
// needs (strings: somewhere in it). `at` names it in errors.
StatusOr<BundleTensor> CheckEntry(const tensorflow::BundleEntryProto& entry, const std::string& at,
                                  const std::string& data_path, int64_t data_bytes) {
  if (!entry.GetReflection()->GetUnknownFields(entry).empty()) {
    return Unimplemented(at + "sliced (a partitioned variable)");
  }
  if (entry.dtype() != tensorflow::DT_FLOAT && entry.dtype() != tensorflow::DT_INT64 &&
      entry.dtype() != tensorflow::DT_STRING) {
    return Unimplemented(at + "dtype " + tensorflow::DataType_Name(entry.dtype()) +
                         " (pstrain reads float32, int64 and string)");
  }
  BundleTensor t;
  t.dtype = entry.dtype();
  for (const auto& dim : entry.shape().dim()) {
    if (dim.size() < 0) return DataLoss(at + "a negative dimension");
    t.shape.push_back(dim.size());
  }
  PS_ASSIGN_OR_RETURN(const int64_t count, CheckedNumElements(t.shape));
  const int64_t size = entry.dtype() == tensorflow::DT_STRING
                           ? entry.size()
                           : count * static_cast<int64_t>(BytesPer(entry.dtype()));
  if (entry.shard_id() != 0 || entry.size() != size || size < 0 || entry.offset() < 0 ||
      entry.offset() > data_bytes - size) {
    return DataLoss(at + "its " + std::to_string(entry.size()) + " bytes at " +
                    std::to_string(entry.offset()) + " do not lie in " + data_path + " (" +
                    std::to_string(data_bytes) + " bytes) as shape " + ShapeString(t.shape) +
                    " needs");
  }
  return t;
}

// The index's first entry: a header of one data shard, little-endian.
Status CheckHeader(leveldb::Iterator* it, const std::string& index_path) {
  tensorflow::BundleHeaderProto header;
  if (!it->Valid() || !it->key().empty() ||
      !header.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
    return DataLoss(index_path + ": no bundle header");
  }
  if (header.num_shards() != 1) {
    return Unimplemented(index_path + ": " + std::to_string(header.num_shards()) +
                         " data shards (pstrain reads bundles of one)");
  }
  if (header.endianness() != tensorflow::BundleHeaderProto::LITTLE) {
    return Unimplemented(index_path + ": big-endian tensors");
  }
  return OkStatus();
}

// The `count` strings of a string tensor's bytes, as TensorFlow lays them
// out: each one's length as a varint64, a masked CRC32C of the lengths (4
// bytes, little-endian), then the strings back to back. The CRC32Cs, of the
// lengths and of the entry (`crc`), are not of these bytes as they lie:
// each length counts as its 4 (above 2^32 - 1, 8) little-endian bytes,
// then come the lengths' checksum and the strings. `at` names the tensor.
StatusOr<std::vector<std::string>> ParseStrings(const std::string& bytes, int64_t count,
                                                uint32_t crc, const std::string& at) {
  size_t pos = 0;
  std::vector<uint64_t> lengths(static_cast<size_t>(count));
  uint64_t total = 0;
  uint32_t computed = 0;
  for (uint64_t& length : lengths) {
    if (!ReadVarint64(bytes, &pos, &length) || length > bytes.size()) {
      return DataLoss(at + "its string lengths run past its bytes");
    }
    computed = crc32c::Extend(computed, &length, length > 0xffffffffu ? 8 : 4);  // little-endian
    total += length;
  }
  uint32_t masked = 0;
  if (pos + sizeof(masked) > bytes.size()) return DataLoss(at + "no checksum of its lengths");
  std::memcpy(&masked, bytes.data() + pos, sizeof(masked));
  if (crc32c::Mask(computed) != masked) {
    return DataLoss(at + "its string lengths fail their CRC32C");
  }
  computed = crc32c::Extend(computed, bytes.data() + pos, bytes.size() - pos);
  if (crc32c::Mask(computed) != crc) return DataLoss(at + "its strings fail their CRC32C");
  pos += sizeof(masked);
  if (total != bytes.size() - pos) {
    return DataLoss(at + "its strings' lengths add up to " + std::to_string(total) + " bytes, " +
                    std::to_string(bytes.size() - pos) + " follow them");
  }
  std::vector<std::string> strings;
  for (uint64_t length : lengths) {
    strings.push_back(bytes.substr(pos, length));
    pos += length;
  }
  return strings;
}

}  // namespace

StatusOr<std::map<std::string, BundleTensor>> ReadTfBundle(
    const std::string& prefix, const std::function<bool(const std::string&)>& skip) {
  const std::string index_path = TfBundleIndexPath(prefix);
  if (!std::filesystem::exists(index_path)) return NotFound("no checkpoint index " + index_path);
  PS_ASSIGN_OR_RETURN(const std::string index, ReadFileToString(index_path));
  if (!FooterFits(index)) {
    return DataLoss(index_path + ": not a tensor bundle index (no table footer that fits)");
  }
  StringSource source(index);
  leveldb::Table* opened = nullptr;
  const leveldb::Status s = leveldb::Table::Open(TableOptions(), &source, index.size(), &opened);
  if (!s.ok()) return DataLoss(index_path + ": not a tensor bundle index: " + s.ToString());
  std::unique_ptr<leveldb::Table> table(opened);
  leveldb::ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<leveldb::Iterator> it(table->NewIterator(read));
  it->SeekToFirst();
  PS_RETURN_IF_ERROR(CheckHeader(it.get(), index_path));
  const std::string data_path = TfBundleDataPath(prefix);
  std::ifstream data(data_path, std::ios::binary);
  if (!data) return DataLoss("cannot open " + data_path);
  const int64_t data_bytes = static_cast<int64_t>(std::filesystem::file_size(data_path));
  std::map<std::string, BundleTensor> tensors;
  for (it->Next(); it->Valid(); it->Next()) {
    const std::string name = it->key().ToString();
    const std::string at = index_path + ": tensor " + name + ": ";
    tensorflow::BundleEntryProto entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return DataLoss(at + "not a BundleEntryProto");
    }
    PS_ASSIGN_OR_RETURN(BundleTensor t, CheckEntry(entry, at, data_path, data_bytes));
    if (skip && skip(name)) continue;
    const int64_t count = NumElements(t.shape);
    const int64_t size = entry.size();
    void* bytes;
    std::string string_bytes;
    if (entry.dtype() == tensorflow::DT_STRING) {
      string_bytes.resize(static_cast<size_t>(size));
      bytes = string_bytes.data();
    } else if (entry.dtype() == tensorflow::DT_FLOAT) {
      t.floats = Tensor(t.shape, Tensor::kUninitialized);
      bytes = t.floats.data();
    } else {
      t.int64s.resize(static_cast<size_t>(count));
      bytes = t.int64s.data();
    }
    data.seekg(entry.offset());
    if (!data.read(static_cast<char*>(bytes), size)) return DataLoss(at + "cannot read its bytes");
    if (entry.dtype() == tensorflow::DT_STRING) {
      PS_ASSIGN_OR_RETURN(t.strings, ParseStrings(string_bytes, count, entry.crc32c(), at));
    } else if (crc32c::Mask(crc32c::Value(bytes, static_cast<size_t>(size))) != entry.crc32c()) {
      return DataLoss(at + "CRC32C mismatch in " + data_path);
    }
    tensors.emplace(name, std::move(t));
  }
  if (!it->status().ok()) return DataLoss(index_path + ": " + it->status().ToString());
  return tensors;
}

}  // namespace pstrain
