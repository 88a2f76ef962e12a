#include "core/file_bytes.h"

#include <sys/stat.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace pstrain {

namespace {

StatusOr<std::FILE*> OpenFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    const std::string message = "cannot open " + path + ": " + std::strerror(errno);
    return errno == ENOENT ? NotFound(message) : Unavailable(message);
  }
  return file;
}

}  // namespace

struct FileBytes::Gzip {
  Gzip() { std::memset(&stream, 0, sizeof(stream)); }
  ~Gzip() { inflateEnd(&stream); }

  z_stream stream;
  unsigned char input[1 << 16];
  bool input_eof = false;     // the file has no more compressed bytes
  bool member_ended = false;  // inflate reached the end of a gzip member
};

bool FileBytes::GzipMagic(const std::string& head) {
  return head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x1f &&
         static_cast<uint8_t>(head[1]) == 0x8b;
}

StatusOr<std::unique_ptr<FileBytes>> FileBytes::Open(
    const std::string& path, size_t sniff,
    const std::function<bool(const std::string& head)>& gzip) {
  PS_ASSIGN_OR_RETURN(std::FILE * file, OpenFile(path));
  std::unique_ptr<FileBytes> f(new FileBytes(path, file));
  std::string head(sniff, '\0');
  head.resize(std::fread(head.data(), 1, sniff, file));
  if (std::ferror(file) != 0 || std::fseek(file, 0, SEEK_SET) != 0) return f->ReadFailed();
  if (gzip(head)) {
    f->gzip_ = std::make_unique<Gzip>();
    if (inflateInit2(&f->gzip_->stream, 16 + MAX_WBITS) != Z_OK) {
      return Internal(path + ": inflateInit2 failed");
    }
  }
  return f;
}

FileBytes::FileBytes(std::string path, std::FILE* file) : path_(std::move(path)), file_(file) {}

FileBytes::~FileBytes() { std::fclose(file_); }

Status FileBytes::ReadFailed() const {
  return Unavailable("cannot read " + path_ + ": " + std::strerror(errno));
}

uint64_t FileBytes::SizeHint() {
  struct stat st;
  if (fstat(fileno(file_), &st) != 0) return 0;
  if (gzip_ == nullptr) return static_cast<uint64_t>(st.st_size);
  unsigned char trailer[4];
  const long at = std::ftell(file_);
  if (st.st_size < 18 || std::fseek(file_, -4, SEEK_END) != 0 ||
      std::fread(trailer, 1, 4, file_) != 4 || std::fseek(file_, at, SEEK_SET) != 0) {
    return 0;
  }
  return uint64_t{trailer[0]} | uint64_t{trailer[1]} << 8 | uint64_t{trailer[2]} << 16 |
         uint64_t{trailer[3]} << 24;
}

StatusOr<size_t> FileBytes::Read(char* out, size_t n) {
  if (gzip_ != nullptr) return Inflate(out, n);
  const size_t got = std::fread(out, 1, n, file_);
  if (got < n && std::ferror(file_)) return ReadFailed();
  return got;
}

StatusOr<size_t> FileBytes::Inflate(char* out, size_t n) {
  z_stream& s = gzip_->stream;
  size_t got = 0;
  while (got < n) {
    if (s.avail_in == 0 && !gzip_->input_eof) {
      const size_t r = std::fread(gzip_->input, 1, sizeof(gzip_->input), file_);
      if (r < sizeof(gzip_->input)) {
        if (std::ferror(file_)) return ReadFailed();
        gzip_->input_eof = true;
      }
      s.next_in = gzip_->input;
      s.avail_in = static_cast<uInt>(r);
    }
    if (gzip_->member_ended) {
      if (s.avail_in == 0) return got;  // the end of the file
      inflateReset(&s);                 // another gzip member follows
      gzip_->member_ended = false;
    }
    s.next_out = reinterpret_cast<Bytef*>(out + got);
    s.avail_out = static_cast<uInt>(std::min<size_t>(n - got, 1u << 30));
    const uInt room = s.avail_out;
    const int rc = inflate(&s, Z_NO_FLUSH);
    got += room - s.avail_out;
    if (rc == Z_STREAM_END) {
      gzip_->member_ended = true;
    } else if (rc == Z_BUF_ERROR && s.avail_in == 0 && gzip_->input_eof) {
      return DataLoss("gzip stream cut short");
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      return DataLoss(std::string("corrupt gzip stream (") +
                      (s.msg != nullptr ? s.msg : "zlib error " + std::to_string(rc)) + ")");
    }
  }
  return got;
}

}  // namespace pstrain
