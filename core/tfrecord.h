// TFRecord files: the container of TensorBoard event files and of the
// tf.train.Example data sets TensorFlow's convert_to_records writes.
//
// Each record is
//   uint64 length              little-endian
//   uint32 masked CRC32C of the 8 length bytes
//   byte   data[length]
//   uint32 masked CRC32C of data
// with crc32c::Mask applied to both CRCs. A GZIP file (TensorFlow's
// TFRecordOptions GZIP) is that same byte stream compressed as one gzip
// stream; the reader recognises it by the 1f 8b magic, so callers need not
// say which kind a file is. Offsets below are in the uncompressed stream.
#ifndef PSTRAIN_CORE_TFRECORD_H_
#define PSTRAIN_CORE_TFRECORD_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "core/file_bytes.h"
#include "core/status.h"

namespace pstrain {

inline constexpr size_t kTfRecordHeaderBytes = 12;  // length + its CRC
inline constexpr size_t kTfRecordFooterBytes = 4;   // CRC of the data

// Appends `data` to *out framed as one record.
void AppendTfRecord(std::string_view data, std::string* out);

// Reads the records of one file, plain or gzip, in order, verifying both CRCs
// of each. Not thread-safe: one reader per thread.
class TfRecordReader {
 public:
  // NotFound if the file does not exist, Unavailable if it cannot be opened
  // or read.
  static StatusOr<std::unique_ptr<TfRecordReader>> Open(const std::string& path);
  ~TfRecordReader();
  TfRecordReader(const TfRecordReader&) = delete;
  TfRecordReader& operator=(const TfRecordReader&) = delete;

  // Reads the next record's data into *data. OutOfRange at a clean end of
  // file (after the last whole record and, for gzip, the end of the stream).
  // DataLoss naming the file, the record's index and its byte offset if the
  // record is truncated, either CRC does not match, or the gzip stream is
  // corrupt or cut short; the reader must not be used after that.
  // Unavailable on a read error.
  Status ReadRecord(std::string* data);

  // Byte offset of the next record to read, in the uncompressed stream.
  uint64_t offset() const { return offset_; }
  // Index of the next record to read: how many have been read.
  int64_t record_index() const { return index_; }
  bool gzip() const { return bytes_->gzip(); }
  const std::string& path() const { return path_; }

 private:
  TfRecordReader(std::string path, std::unique_ptr<FileBytes> bytes);
  // Reads up to n bytes; *got < n only at the end of the (uncompressed) file.
  Status ReadFully(char* buf, size_t n, size_t* got);
  Status Corrupt(const std::string& what) const;

  const std::string path_;
  const std::unique_ptr<FileBytes> bytes_;
  uint64_t offset_ = 0;
  int64_t index_ = 0;
};

enum class TfRecordCompression { kNone, kGzip };

// Writes a TFRecord file, plain or as one gzip stream, through a temporary
// file "<path>.tmp-<pid>" that Close renames over `path` (core/atomic_file.h):
// `path` is untouched until Close succeeds, and a writer destroyed without
// Close removes the temporary file. Not thread-safe.
class TfRecordWriter {
 public:
  // Unavailable if the temporary file cannot be created.
  static StatusOr<std::unique_ptr<TfRecordWriter>> Create(const std::string& path,
                                                          TfRecordCompression compression);
  ~TfRecordWriter();
  TfRecordWriter(const TfRecordWriter&) = delete;
  TfRecordWriter& operator=(const TfRecordWriter&) = delete;

  // Appends one record. Unavailable on a write error, FailedPrecondition
  // after Close.
  Status Write(std::string_view data);
  // Flushes, ends the gzip stream, fsyncs and renames the file into place.
  // Unavailable on an I/O error; FailedPrecondition if called twice.
  Status Close();

  int64_t records_written() const { return records_; }
  const std::string& path() const { return path_; }

 private:
  struct Impl;

  TfRecordWriter(std::string path, std::unique_ptr<Impl> impl);
  // Hands the framed bytes buffered so far to the file (compressing them
  // first for gzip); `finish` also ends the gzip stream.
  Status Flush(bool finish);

  const std::string path_;
  std::unique_ptr<Impl> impl_;
  std::string buffer_;  // framed records not yet handed to the file
  int64_t records_ = 0;
  bool closed_ = false;
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_TFRECORD_H_
