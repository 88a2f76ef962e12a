#include "core/tfrecord.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/test_util.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

using test_util::ReadBytes;
using test_util::TempDir;
using test_util::WriteBytes;

// `bytes` as one gzip stream, written by zlib's gzwrite (not the code under
// test), the way TensorFlow's ZlibOutputBuffer frames a GZIP TFRecord file.
std::string GzipBytes(const TempDir& dir, const std::string& bytes) {
  const std::string path = dir.path() + "/gzip.tmp";
  gzFile file = gzopen(path.c_str(), "wb");
  EXPECT_NE(file, nullptr);
  if (!bytes.empty()) {
    EXPECT_EQ(gzwrite(file, bytes.data(), bytes.size()), static_cast<int>(bytes.size()));
  }
  EXPECT_EQ(gzclose(file), Z_OK);
  std::string gz = ReadBytes(path);
  std::filesystem::remove(path);
  return gz;
}

// Decompresses a gzip file with zlib's gzread.
std::string GunzipFile(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  EXPECT_NE(file, nullptr);
  std::string out;
  char buffer[1 << 16];
  int n;
  while ((n = gzread(file, buffer, sizeof(buffer))) > 0) out.append(buffer, n);
  EXPECT_EQ(n, 0);
  gzclose(file);
  return out;
}

// Reads every record, returning the status that ended the read.
Status ReadAll(const std::string& path, std::vector<std::string>* records) {
  StatusOr<std::unique_ptr<TfRecordReader>> reader = TfRecordReader::Open(path);
  if (!reader.ok()) return reader.status();
  for (;;) {
    std::string data;
    Status s = (*reader)->ReadRecord(&data);
    if (!s.ok()) return s;
    records->push_back(data);
  }
}

// Bytes that deflate cannot shrink much, so a gzip file spans many reads.
std::string Noise(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

std::string Framed(const std::vector<std::string>& records) {
  std::string bytes;
  for (const std::string& r : records) AppendTfRecord(r, &bytes);
  return bytes;
}

TEST(TfRecord, FramingMatchesTensorFlowsBytes) {
  const std::string tf_bytes = ReadBytes(PSTRAIN_TF_EVENT_FILE);
  ASSERT_FALSE(tf_bytes.empty()) << "cannot read " << PSTRAIN_TF_EVENT_FILE;
  TempDir dir;
  const std::string path = dir.path() + "/copy";
  WriteBytes(path, tf_bytes);
  std::vector<std::string> records;
  EXPECT_EQ(ReadAll(path, &records).code(), Code::kOutOfRange);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(Framed(records), tf_bytes);
}

TEST(TfRecord, FramesARecordAsTensorFlowSpecifies) {
  // length 3; masked CRC32C of the length bytes; "abc"; masked CRC32C of
  // "abc". CRC32C("abc") = 0x364b3fb7 and CRC32C of 03 00 00 00 00 00 00 00
  // = 0x576c35e3 (the Castagnoli polynomial); mask = ((crc >> 15) | (crc << 17))
  // + 0xa282ead8.
  auto mask = [](uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; };
  auto le32 = [](uint32_t v) {
    return std::string{static_cast<char>(v), static_cast<char>(v >> 8), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 24)};
  };
  const std::string expected = std::string("\x03\0\0\0\0\0\0\0", 8) + le32(mask(0x576c35e3u)) +
                               "abc" + le32(mask(0x364b3fb7u));
  std::string bytes;
  AppendTfRecord("abc", &bytes);
  EXPECT_EQ(bytes, expected);
}

TEST(TfRecord, RoundTripsIncludingEmptyRecords) {
  TempDir dir;
  const std::vector<std::string> written = {"", "a", std::string(100000, 'x'), "tail"};
  WriteBytes(dir.path() + "/f", Framed(written));
  std::vector<std::string> read;
  const Status end = ReadAll(dir.path() + "/f", &read);
  EXPECT_EQ(end.code(), Code::kOutOfRange) << end.ToString();
  EXPECT_EQ(read, written);
}

TEST(TfRecord, EveryFlippedByteIsDataLoss) {
  TempDir dir;
  const std::string bytes = Framed({"first", "second"});
  const size_t second_at = kTfRecordHeaderBytes + 5 + kTfRecordFooterBytes;
  const std::string path = dir.path() + "/f";
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x20;
    WriteBytes(path, bad);
    std::vector<std::string> records;
    const Status s = ReadAll(path, &records);
    EXPECT_EQ(s.code(), Code::kDataLoss) << "byte " << i << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    const std::string where =
        i < second_at ? "record 0 at offset 0" : "record 1 at offset " + std::to_string(second_at);
    EXPECT_NE(s.message().find(where), std::string::npos) << "byte " << i << ": " << s.message();
  }
}

TEST(TfRecord, EveryTruncationInsideARecordIsDataLoss) {
  TempDir dir;
  std::string bytes;
  AppendTfRecord("first", &bytes);
  const size_t boundary = bytes.size();
  AppendTfRecord("second", &bytes);
  const std::string path = dir.path() + "/f";
  for (size_t n = 0; n < bytes.size(); ++n) {
    WriteBytes(path, bytes.substr(0, n));
    std::vector<std::string> records;
    const Status s = ReadAll(path, &records);
    if (n == 0 || n == boundary) {
      EXPECT_EQ(s.code(), Code::kOutOfRange) << n;
      continue;
    }
    EXPECT_EQ(s.code(), Code::kDataLoss) << "length " << n << ": " << s.ToString();
    EXPECT_NE(s.message().find("truncated"), std::string::npos) << s.message();
    const std::string where =
        n < boundary ? "record 0 at offset 0" : "record 1 at offset " + std::to_string(boundary);
    EXPECT_NE(s.message().find(where), std::string::npos) << s.message();
  }
}

TEST(TfRecord, MissingFileIsNotFound) {
  EXPECT_EQ(TfRecordReader::Open("/nonexistent/events").status().code(), Code::kNotFound);
}

TEST(TfRecord, CountsRecordsAndOffsets) {
  TempDir dir;
  WriteBytes(dir.path() + "/f", Framed({"ab", "cde"}));
  StatusOr<std::unique_ptr<TfRecordReader>> reader = TfRecordReader::Open(dir.path() + "/f");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_FALSE((*reader)->gzip());
  std::string data;
  PS_ASSERT_OK((*reader)->ReadRecord(&data));
  EXPECT_EQ((*reader)->record_index(), 1);
  EXPECT_EQ((*reader)->offset(), 18u);
  PS_ASSERT_OK((*reader)->ReadRecord(&data));
  EXPECT_EQ(data, "cde");
  EXPECT_EQ((*reader)->record_index(), 2);
  EXPECT_EQ((*reader)->offset(), 37u);
  EXPECT_EQ((*reader)->ReadRecord(&data).code(), Code::kOutOfRange);
}

TEST(TfRecord, PlainFileWhoseLengthBeginsLikeGzipIsPlain) {
  // Length 0x8b1f: the file starts 1f 8b, gzip's magic.
  TempDir dir;
  const std::vector<std::string> written = {std::string(0x8b1f, 'z'), "next"};
  const std::string bytes = Framed(written);
  ASSERT_EQ(static_cast<uint8_t>(bytes[0]), 0x1f);
  ASSERT_EQ(static_cast<uint8_t>(bytes[1]), 0x8b);
  WriteBytes(dir.path() + "/f", bytes);
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(dir.path() + "/f", &read).code(), Code::kOutOfRange);
  EXPECT_EQ(read, written);
}

TEST(TfRecordGzip, ReadsAGzipFileWithoutBeingTold) {
  TempDir dir;
  const std::vector<std::string> written = {"", "a", Noise(300000, 1), std::string(200000, 'y'),
                                            "tail"};
  const std::string path = dir.path() + "/f.gz";
  WriteBytes(path, GzipBytes(dir, Framed(written)));
  StatusOr<std::unique_ptr<TfRecordReader>> reader = TfRecordReader::Open(path);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  EXPECT_TRUE((*reader)->gzip());
  std::vector<std::string> read;
  const Status end = ReadAll(path, &read);
  EXPECT_EQ(end.code(), Code::kOutOfRange) << end.ToString();
  EXPECT_EQ(read, written);
}

TEST(TfRecordGzip, EmptyGzipStreamHasNoRecords) {
  TempDir dir;
  const std::string path = dir.path() + "/f.gz";
  WriteBytes(path, GzipBytes(dir, ""));
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(path, &read).code(), Code::kOutOfRange);
  EXPECT_TRUE(read.empty());
}

TEST(TfRecordGzip, ReadsConcatenatedGzipMembers) {
  TempDir dir;
  const std::string path = dir.path() + "/f.gz";
  WriteBytes(path, GzipBytes(dir, Framed({"one"})) + GzipBytes(dir, Framed({"two", "three"})));
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(path, &read).code(), Code::kOutOfRange);
  EXPECT_EQ(read, (std::vector<std::string>{"one", "two", "three"}));
}

TEST(TfRecordGzip, EveryTruncationIsDataLoss) {
  TempDir dir;
  const std::string gz = GzipBytes(dir, Framed({"first", Noise(400, 2), "third"}));
  const std::string path = dir.path() + "/f.gz";
  for (size_t n = 2; n < gz.size(); ++n) {
    WriteBytes(path, gz.substr(0, n));
    std::vector<std::string> records;
    const Status s = ReadAll(path, &records);
    EXPECT_EQ(s.code(), Code::kDataLoss) << "length " << n << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    const std::string record = "record " + std::to_string(records.size()) + " at offset ";
    EXPECT_NE(s.message().find(record), std::string::npos) << s.message();
  }
}

// A flipped bit in the compressed stream either decodes to the very same
// bytes (deflate has a few bits that change nothing, e.g. in a dynamic
// block's header) or is DataLoss: never records that differ.
TEST(TfRecordGzip, EveryFlippedByteIsDataLossOrHarmless) {
  TempDir dir;
  const std::vector<std::string> written = {"first", Noise(500, 3), "third"};
  const std::string gz = GzipBytes(dir, Framed(written));
  const std::string path = dir.path() + "/f.gz";
  int harmless = 0;
  for (size_t i = 0; i < gz.size(); ++i) {
    if (i >= 4 && i < 10) continue;  // mtime, extra flags, OS: gzip checks none of them
    std::string bad = gz;
    bad[i] ^= 0x20;
    WriteBytes(path, bad);
    std::vector<std::string> records;
    const Status s = ReadAll(path, &records);
    if (s.code() == Code::kOutOfRange) {
      EXPECT_EQ(records, written) << "byte " << i;
      ++harmless;
      continue;
    }
    EXPECT_EQ(s.code(), Code::kDataLoss) << "byte " << i << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("record "), std::string::npos) << s.message();
  }
  EXPECT_LE(harmless, 4) << "of " << gz.size() << " bytes";
}

TEST(TfRecordGzip, CrcMismatchInsideTheStreamNamesTheRecord) {
  TempDir dir;
  std::string plain = Framed({"first", "second", "third"});
  const size_t third_at = 2 * (kTfRecordHeaderBytes + kTfRecordFooterBytes) + 5 + 6;
  plain[third_at + kTfRecordHeaderBytes] ^= 1;  // a byte of "third"
  const std::string path = dir.path() + "/f.gz";
  WriteBytes(path, GzipBytes(dir, plain));
  std::vector<std::string> records;
  const Status s = ReadAll(path, &records);
  EXPECT_EQ(s.code(), Code::kDataLoss) << s.ToString();
  EXPECT_EQ(records.size(), 2u);
  EXPECT_NE(s.message().find("data CRC mismatch in record 2 at offset " + std::to_string(third_at)),
            std::string::npos)
      << s.message();
}

TEST(TfRecordWriter, PlainFileIsTheFramedRecords) {
  TempDir dir;
  const std::vector<std::string> records = {"", "x", Noise(700000, 4), Noise(700000, 5), "end"};
  const std::string path = dir.path() + "/out.tfrecords";
  StatusOr<std::unique_ptr<TfRecordWriter>> writer =
      TfRecordWriter::Create(path, TfRecordCompression::kNone);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (const std::string& r : records) ASSERT_TRUE((*writer)->Write(r).ok());
  EXPECT_EQ((*writer)->records_written(), 5);
  PS_ASSERT_OK((*writer)->Close());
  EXPECT_EQ(ReadBytes(path), Framed(records));
}

TEST(TfRecordWriter, GzipFileIsOneGzipStreamOfTheFramedRecords) {
  TempDir dir;
  const std::vector<std::string> records = {"a", Noise(1500000, 6), std::string(900000, 'q'), ""};
  const std::string path = dir.path() + "/out.tfrecords.gz";
  StatusOr<std::unique_ptr<TfRecordWriter>> writer =
      TfRecordWriter::Create(path, TfRecordCompression::kGzip);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  for (const std::string& r : records) ASSERT_TRUE((*writer)->Write(r).ok());
  PS_ASSERT_OK((*writer)->Close());
  const std::string gz = ReadBytes(path);
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<uint8_t>(gz[0]), 0x1f);
  EXPECT_EQ(static_cast<uint8_t>(gz[1]), 0x8b);
  EXPECT_LT(gz.size(), Framed(records).size());
  EXPECT_EQ(GunzipFile(path), Framed(records));
  std::vector<std::string> read;
  EXPECT_EQ(ReadAll(path, &read).code(), Code::kOutOfRange);
  EXPECT_EQ(read, records);
}

TEST(TfRecordWriter, NothingAppearsWithoutClose) {
  TempDir dir;
  const std::string path = dir.path() + "/out.tfrecords";
  for (TfRecordCompression c : {TfRecordCompression::kNone, TfRecordCompression::kGzip}) {
    {
      StatusOr<std::unique_ptr<TfRecordWriter>> writer = TfRecordWriter::Create(path, c);
      ASSERT_TRUE(writer.ok()) << writer.status().ToString();
      PS_ASSERT_OK((*writer)->Write(Noise(2000000, 7)));
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
  }
}

TEST(TfRecordWriter, CloseReplacesAnOldFile) {
  TempDir dir;
  const std::string path = dir.path() + "/out.tfrecords";
  WriteBytes(path, "old contents");
  StatusOr<std::unique_ptr<TfRecordWriter>> writer =
      TfRecordWriter::Create(path, TfRecordCompression::kNone);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->Write("new"));
  EXPECT_EQ(ReadBytes(path), "old contents");
  PS_ASSERT_OK((*writer)->Close());
  EXPECT_EQ(ReadBytes(path), Framed({"new"}));
}

TEST(TfRecordWriter, WriteOrCloseAfterCloseIsFailedPrecondition) {
  TempDir dir;
  StatusOr<std::unique_ptr<TfRecordWriter>> writer =
      TfRecordWriter::Create(dir.path() + "/f", TfRecordCompression::kGzip);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->Close());
  EXPECT_EQ((*writer)->Write("late").code(), Code::kFailedPrecondition);
  EXPECT_EQ((*writer)->Close().code(), Code::kFailedPrecondition);
}

TEST(TfRecordWriter, MissingDirectoryIsUnavailable) {
  StatusOr<std::unique_ptr<TfRecordWriter>> writer =
      TfRecordWriter::Create("/nonexistent/dir/f", TfRecordCompression::kNone);
  ASSERT_FALSE(writer.ok());
  EXPECT_EQ(writer.status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace pstrain
