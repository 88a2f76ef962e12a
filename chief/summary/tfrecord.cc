#include "chief/summary/tfrecord.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/crc32c.h"

namespace pstrain {
namespace {

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

StatusOr<std::unique_ptr<TfRecordReader>> TfRecordReader::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const std::string message = "cannot open " + path + ": " + std::strerror(errno);
    return errno == ENOENT ? NotFound(message) : Unavailable(message);
  }
  return std::unique_ptr<TfRecordReader>(new TfRecordReader(path, file));
}

TfRecordReader::~TfRecordReader() { std::fclose(file_); }

Status TfRecordReader::ReadFully(void* buf, size_t n, size_t* got) {
  *got = std::fread(buf, 1, n, file_);
  if (*got < n && std::ferror(file_)) {
    return Unavailable("cannot read " + path_ + ": " + std::strerror(errno));
  }
  return OkStatus();
}

Status TfRecordReader::Corrupt(const std::string& what) const {
  return DataLoss(path_ + ": " + what + " in the record at offset " + std::to_string(offset_));
}

Status TfRecordReader::ReadRecord(std::string* data) {
  char header[kTfRecordHeaderBytes];
  size_t got = 0;
  PS_RETURN_IF_ERROR(ReadFully(header, sizeof(header), &got));
  if (got == 0) return OutOfRange(path_ + ": end of file at offset " + std::to_string(offset_));
  if (got < sizeof(header)) return Corrupt("truncated header");
  if (crc32c::Unmask(DecodeFixed32(header + 8)) != crc32c::Value(header, 8)) {
    return Corrupt("length CRC mismatch");
  }
  const uint64_t length = DecodeFixed64(header);
  // Bound the allocation by what the file holds before trusting the length.
  struct stat st;
  if (fstat(fileno(file_), &st) != 0) {
    return Unavailable("cannot stat " + path_ + ": " + std::strerror(errno));
  }
  const uint64_t left = static_cast<uint64_t>(st.st_size) - offset_ - sizeof(header);
  if (length > left || left - length < kTfRecordFooterBytes) {
    return Corrupt("truncated data (length " + std::to_string(length) + ", " +
                   std::to_string(left) + " bytes left)");
  }
  data->resize(length);
  char footer[kTfRecordFooterBytes];
  PS_RETURN_IF_ERROR(ReadFully(data->data(), length, &got));
  if (got < length) return Corrupt("truncated data");
  PS_RETURN_IF_ERROR(ReadFully(footer, sizeof(footer), &got));
  if (got < sizeof(footer)) return Corrupt("truncated data CRC");
  if (crc32c::Unmask(DecodeFixed32(footer)) != crc32c::Value(data->data(), data->size())) {
    return Corrupt("data CRC mismatch");
  }
  offset_ += sizeof(header) + length + sizeof(footer);
  return OkStatus();
}

}  // namespace pstrain
