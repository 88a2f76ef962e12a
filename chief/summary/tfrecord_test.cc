#include "chief/summary/tfrecord.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chief/summary/test_util.h"

namespace pstrain {
namespace {

using summary_test::ReadBytes;
using summary_test::TempDir;
using summary_test::WriteBytes;

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

TEST(TfRecord, FramingMatchesTensorFlowsBytes) {
  const std::string tf_bytes = ReadBytes(PSTRAIN_TF_EVENT_FILE);
  if (tf_bytes.empty()) GTEST_SKIP() << "no " << PSTRAIN_TF_EVENT_FILE;
  TempDir dir;
  const std::string path = dir.path() + "/copy";
  WriteBytes(path, tf_bytes);
  std::vector<std::string> records;
  EXPECT_EQ(ReadAll(path, &records).code(), Code::kOutOfRange);
  ASSERT_EQ(records.size(), 2u);
  std::string reframed;
  for (const std::string& r : records) AppendTfRecord(r, &reframed);
  EXPECT_EQ(reframed, tf_bytes);
}

TEST(TfRecord, RoundTripsIncludingEmptyRecords) {
  TempDir dir;
  const std::vector<std::string> written = {"", "a", std::string(100000, 'x'), "tail"};
  std::string bytes;
  for (const std::string& r : written) AppendTfRecord(r, &bytes);
  WriteBytes(dir.path() + "/f", bytes);
  std::vector<std::string> read;
  const Status end = ReadAll(dir.path() + "/f", &read);
  EXPECT_EQ(end.code(), Code::kOutOfRange) << end.ToString();
  EXPECT_EQ(read, written);
}

TEST(TfRecord, EveryFlippedByteIsDataLoss) {
  TempDir dir;
  std::string bytes;
  AppendTfRecord("first", &bytes);
  AppendTfRecord("second", &bytes);
  const std::string path = dir.path() + "/f";
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string bad = bytes;
    bad[i] ^= 0x20;
    WriteBytes(path, bad);
    std::vector<std::string> records;
    const Status s = ReadAll(path, &records);
    EXPECT_EQ(s.code(), Code::kDataLoss) << "byte " << i << ": " << s.ToString();
    EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
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
    const std::string offset = n < boundary ? "offset 0" : "offset " + std::to_string(boundary);
    EXPECT_NE(s.message().find(offset), std::string::npos) << s.message();
  }
}

TEST(TfRecord, MissingFileIsNotFound) {
  EXPECT_EQ(TfRecordReader::Open("/nonexistent/events").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace pstrain
