// TFRecord framing, the container of TensorBoard event files. Each record is
//   uint64 length              little-endian
//   uint32 masked CRC32C of the 8 length bytes
//   byte   data[length]
//   uint32 masked CRC32C of data
// with crc32c::Mask applied to both CRCs.
#ifndef PSTRAIN_CHIEF_SUMMARY_TFRECORD_H_
#define PSTRAIN_CHIEF_SUMMARY_TFRECORD_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "core/status.h"

namespace pstrain {

inline constexpr size_t kTfRecordHeaderBytes = 12;  // length + its CRC
inline constexpr size_t kTfRecordFooterBytes = 4;   // CRC of the data

// Appends `data` to *out framed as one record.
void AppendTfRecord(std::string_view data, std::string* out);

// Reads the records of one file in order, verifying both CRCs of each.
// Not thread-safe: one reader per thread.
class TfRecordReader {
 public:
  // NotFound if the file does not exist, Unavailable if it cannot be opened.
  static StatusOr<std::unique_ptr<TfRecordReader>> Open(const std::string& path);
  ~TfRecordReader();
  TfRecordReader(const TfRecordReader&) = delete;
  TfRecordReader& operator=(const TfRecordReader&) = delete;

  // Reads the next record's data into *data. OutOfRange at a clean end of
  // file (after the last whole record). DataLoss naming the file and the
  // record's byte offset if the record is truncated or either CRC does not
  // match; the reader should not be used after that. Unavailable on a read
  // error.
  Status ReadRecord(std::string* data);

  // Byte offset of the next record to read.
  uint64_t offset() const { return offset_; }
  const std::string& path() const { return path_; }

 private:
  TfRecordReader(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}
  // Reads exactly n bytes, or sets *got to fewer at end of file.
  Status ReadFully(void* buf, size_t n, size_t* got);
  Status Corrupt(const std::string& what) const;

  const std::string path_;
  std::FILE* const file_;
  uint64_t offset_ = 0;
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUMMARY_TFRECORD_H_
