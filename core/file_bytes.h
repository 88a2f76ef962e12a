// FileBytes: a file's bytes as they are read, inflated on the way when it
// is gzip (every member of a file of several), so that a reader takes what
// it needs in pieces with no copy of the whole file, compressed or not,
// beside them. The IDX and TFRecord readers read through it.
//
// Errors: Unavailable ("cannot read PATH: ...") when the file cannot be
// read; DataLoss when its gzip stream is corrupt or cut short, the message
// without the path ("gzip stream cut short", "corrupt gzip stream (...)"),
// for the reader to say where in its own terms.
//
// Not thread-safe: one reader per thread.
#ifndef PSTRAIN_CORE_FILE_BYTES_H_
#define PSTRAIN_CORE_FILE_BYTES_H_

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>

#include "core/status.h"

namespace pstrain {

class FileBytes {
 public:
  // Whether head begins with gzip's magic, 1f 8b.
  static bool GzipMagic(const std::string& head);

  // Opens the file; it is inflated when gzip(head) says so, head being its
  // first `sniff` bytes (fewer when it is shorter), read and then read
  // again from the start. NotFound when the file does not exist,
  // Unavailable when it cannot be opened, read or read again from the
  // start (a pipe).
  static StatusOr<std::unique_ptr<FileBytes>> Open(
      const std::string& path, size_t sniff,
      const std::function<bool(const std::string& head)>& gzip);
  ~FileBytes();
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;

  // Reads up to n bytes into out: fewer only at the file's end.
  StatusOr<size_t> Read(char* out, size_t n);
  // How many bytes the file holds, uncompressed, if it says (a single gzip
  // member's size modulo 2^32: exact below 4 GiB); 0 when unknown.
  uint64_t SizeHint();
  bool gzip() const { return gzip_ != nullptr; }

 private:
  struct Gzip;  // inflate state
  FileBytes(std::string path, std::FILE* file);
  StatusOr<size_t> Inflate(char* out, size_t n);
  Status ReadFailed() const;

  const std::string path_;
  std::FILE* const file_;
  std::unique_ptr<Gzip> gzip_;  // null for a plain file
};

}  // namespace pstrain

#endif  // PSTRAIN_CORE_FILE_BYTES_H_
