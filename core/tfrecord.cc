#include "core/tfrecord.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "core/atomic_file.h"
#include "core/crc32c.h"

namespace pstrain {
namespace {

// Records are read in pieces of at most this many bytes, so a length that
// passed its CRC but exceeds what the file holds cannot allocate more.
constexpr size_t kReadChunkBytes = size_t{16} << 20;
// The writer hands its buffer to the file (or to deflate) at this size.
constexpr size_t kWriteBufferBytes = size_t{1} << 20;

void EncodeFixed64(uint64_t v, char* out) {
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
void EncodeFixed32(uint32_t v, char* out) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(v >> (8 * i));
}
uint64_t DecodeFixed64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return v;
}
uint32_t DecodeFixed32(const char* in) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(static_cast<uint8_t>(in[i])) << (8 * i);
  return v;
}

bool HeaderCrcMatches(const char* header) {
  return crc32c::Matches(crc32c::Unmask(DecodeFixed32(header + 8)), crc32c::Value(header, 8));
}

}  // namespace

void AppendTfRecord(std::string_view data, std::string* out) {
  char header[kTfRecordHeaderBytes];
  EncodeFixed64(data.size(), header);
  EncodeFixed32(crc32c::Mask(crc32c::Value(header, 8)), header + 8);
  char footer[kTfRecordFooterBytes];
  EncodeFixed32(crc32c::Mask(crc32c::Value(data.data(), data.size())), footer);
  out->append(header, sizeof(header));
  out->append(data);
  out->append(footer, sizeof(footer));
}

// ---------------------------------------------------------------------------
// Reader

TfRecordReader::TfRecordReader(std::string path, std::unique_ptr<FileBytes> bytes)
    : path_(std::move(path)), bytes_(std::move(bytes)) {}

StatusOr<std::unique_ptr<TfRecordReader>> TfRecordReader::Open(const std::string& path) {
  // A plain file whose first record's length happens to begin 1f 8b still
  // has a matching length CRC; a gzip header matches it by chance only.
  PS_ASSIGN_OR_RETURN(std::unique_ptr<FileBytes> bytes,
                      FileBytes::Open(path, kTfRecordHeaderBytes, [](const std::string& head) {
                        const bool plain_record =
                            head.size() == kTfRecordHeaderBytes && HeaderCrcMatches(head.data());
                        return FileBytes::GzipMagic(head) && !plain_record;
                      }));
  return std::unique_ptr<TfRecordReader>(new TfRecordReader(path, std::move(bytes)));
}

TfRecordReader::~TfRecordReader() = default;

Status TfRecordReader::ReadFully(char* buf, size_t n, size_t* got) {
  StatusOr<size_t> read = bytes_->Read(buf, n);
  if (!read.ok()) {
    return read.status().code() == Code::kDataLoss ? Corrupt(read.status().message())
                                                   : read.status();
  }
  *got = *read;
  return OkStatus();
}

Status TfRecordReader::Corrupt(const std::string& what) const {
  return DataLoss(path_ + ": " + what + " in record " + std::to_string(index_) + " at offset " +
                  std::to_string(offset_));
}

Status TfRecordReader::ReadRecord(std::string* data) {
  char header[kTfRecordHeaderBytes];
  size_t got = 0;
  PS_RETURN_IF_ERROR(ReadFully(header, sizeof(header), &got));
  if (got == 0) {
    return OutOfRange(path_ + ": end of file after " + std::to_string(index_) +
                      " records at offset " + std::to_string(offset_));
  }
  if (got < sizeof(header)) {
    return Corrupt("truncated header (" + std::to_string(got) + " of " +
                   std::to_string(sizeof(header)) + " bytes)");
  }
  if (!HeaderCrcMatches(header)) return Corrupt("length CRC mismatch");
  const uint64_t length = DecodeFixed64(header);
  data->clear();
  while (data->size() < length) {
    const size_t before = data->size();
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(length - before, kReadChunkBytes));
    data->resize(before + chunk);
    PS_RETURN_IF_ERROR(ReadFully(data->data() + before, chunk, &got));
    if (got < chunk) {
      return Corrupt("truncated data (length " + std::to_string(length) + ", " +
                     std::to_string(before + got) + " bytes left)");
    }
  }
  char footer[kTfRecordFooterBytes];
  PS_RETURN_IF_ERROR(ReadFully(footer, sizeof(footer), &got));
  if (got < sizeof(footer)) return Corrupt("truncated data CRC");
  if (!crc32c::Matches(crc32c::Unmask(DecodeFixed32(footer)),
                       crc32c::Value(data->data(), data->size()))) {
    return Corrupt("data CRC mismatch");
  }
  offset_ += sizeof(header) + length + sizeof(footer);
  ++index_;
  return OkStatus();
}

// ---------------------------------------------------------------------------
// Writer

struct TfRecordWriter::Impl {
  Impl() { std::memset(&stream, 0, sizeof(stream)); }
  ~Impl() {
    if (gzip) deflateEnd(&stream);
  }

  std::unique_ptr<AtomicFile> file;
  bool gzip = false;
  z_stream stream;
};

TfRecordWriter::TfRecordWriter(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

TfRecordWriter::~TfRecordWriter() = default;

StatusOr<std::unique_ptr<TfRecordWriter>> TfRecordWriter::Create(const std::string& path,
                                                                 TfRecordCompression compression) {
  auto impl = std::make_unique<Impl>();
  PS_ASSIGN_OR_RETURN(impl->file, AtomicFile::Create(path));
  if (compression == TfRecordCompression::kGzip) {
    if (deflateInit2(&impl->stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      return Internal(path + ": deflateInit2 failed");
    }
    impl->gzip = true;
  }
  return std::unique_ptr<TfRecordWriter>(new TfRecordWriter(path, std::move(impl)));
}

Status TfRecordWriter::Write(std::string_view data) {
  if (closed_) return FailedPrecondition(path_ + ": write after Close");
  AppendTfRecord(data, &buffer_);
  ++records_;
  if (buffer_.size() >= kWriteBufferBytes) return Flush(/*finish=*/false);
  return OkStatus();
}

Status TfRecordWriter::Close() {
  if (closed_) return FailedPrecondition(path_ + ": closed twice");
  closed_ = true;
  PS_RETURN_IF_ERROR(Flush(/*finish=*/true));
  return impl_->file->Commit();
}

Status TfRecordWriter::Flush(bool finish) {
  if (!impl_->gzip) {
    PS_RETURN_IF_ERROR(impl_->file->Append(buffer_.data(), buffer_.size()));
    buffer_.clear();
    return OkStatus();
  }
  z_stream& s = impl_->stream;
  s.next_in = reinterpret_cast<Bytef*>(buffer_.data());
  s.avail_in = static_cast<uInt>(buffer_.size());
  char out[1 << 16];
  int rc = Z_OK;
  do {
    s.next_out = reinterpret_cast<Bytef*>(out);
    s.avail_out = sizeof(out);
    rc = deflate(&s, finish ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) return Internal(path_ + ": deflate failed");
    PS_RETURN_IF_ERROR(impl_->file->Append(out, sizeof(out) - s.avail_out));
  } while (s.avail_out == 0 || (finish && rc != Z_STREAM_END));
  buffer_.clear();
  return OkStatus();
}

}  // namespace pstrain
