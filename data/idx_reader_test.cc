#include "data/idx_reader.h"

#include <gtest/gtest.h>

#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

TEST(ReadIdxFile, ReadsPlainAndGzipFiles) {
  TempDir dir;
  const std::string bytes = IdxBytes({2, 3}, {1, 2, 3, 4, 5, 255});
  for (bool gzip : {false, true}) {
    const std::string path = dir.path() + (gzip ? "/a.gz" : "/a");
    WriteFile(path, bytes, gzip);
    StatusOr<IdxArray> array = ReadIdxFile(path);
    ASSERT_TRUE(array.ok()) << array.status().ToString();
    EXPECT_EQ(array->dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(array->values, (std::vector<uint8_t>{1, 2, 3, 4, 5, 255}));
  }
}

TEST(ReadIdxFile, ReadsConcatenatedGzipMembers) {
  TempDir dir;
  const std::string bytes = IdxBytes({4}, {9, 8, 7, 6});
  const std::string first = dir.path() + "/first.gz", second = dir.path() + "/second.gz";
  WriteFile(first, bytes.substr(0, 5), true);
  WriteFile(second, bytes.substr(5), true);
  const std::string both = dir.path() + "/both.gz";
  ASSERT_EQ(std::system(("cat " + first + " " + second + " > " + both).c_str()), 0);
  StatusOr<IdxArray> array = ReadIdxFile(both);
  ASSERT_TRUE(array.ok()) << array.status().ToString();
  EXPECT_EQ(array->values, (std::vector<uint8_t>{9, 8, 7, 6}));
}

// Every subset of a 7-item file, against keeping them by hand: the items
// kept, in order, and nothing else read into memory.
TEST(ReadIdxFile, KeepsOnlyTheItemsOfASubset) {
  TempDir dir;
  std::vector<uint8_t> values;
  for (uint8_t i = 0; i < 14; ++i) values.push_back(i);
  const std::string bytes = IdxBytes({7, 2}, values);
  for (bool gzip : {false, true}) {
    const std::string path = dir.path() + (gzip ? "/s.gz" : "/s");
    WriteFile(path, bytes, gzip);
    for (int shards = 1; shards <= 4; ++shards) {
      for (int index = 0; index < shards; ++index) {
        for (int64_t limit : {0, 1, 3, 6, 7, 9}) {
          ExampleSubset keep;
          keep.shard = {index, shards};
          keep.limit = limit;
          std::vector<uint8_t> expected;
          for (int64_t i = 0; i < 7; ++i) {
            if ((limit == 0 || i < limit) && i % shards == index) {
              expected.insert(expected.end(), {values[2 * i], values[2 * i + 1]});
            }
          }
          StatusOr<IdxArray> array = ReadIdxFile(path, keep);
          ASSERT_TRUE(array.ok()) << array.status().ToString();
          SCOPED_TRACE("shard " + std::to_string(index) + " of " + std::to_string(shards) +
                       ", limit " + std::to_string(limit));
          EXPECT_EQ(array->values, expected);
          EXPECT_EQ(array->dims,
                    (std::vector<int64_t>{static_cast<int64_t>(expected.size() / 2), 2}));
          EXPECT_EQ(array->items_in_file, 7);
          EXPECT_EQ(array->values.capacity(), expected.size()) << "reserved beyond the subset";
        }
      }
    }
  }
  // A short file is short whatever is kept.
  const std::string cut = dir.path() + "/cut";
  WriteFile(cut, bytes.substr(0, bytes.size() - 3), false);
  ExampleSubset first;
  first.limit = 1;
  StatusOr<IdxArray> array = ReadIdxFile(cut, first);
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().code(), Code::kDataLoss) << array.status().ToString();
  EXPECT_NE(array.status().message().find("expected 26 bytes, got 23"), std::string::npos)
      << array.status().message();
}

struct BadFile {
  const char* name;
  std::string bytes;
  bool gzip;
  Code code;
  const char* message;  // a substring of the message, after the file's path
};

TEST(ReadIdxFile, RejectsBadFiles) {
  const std::string good = IdxBytes({2, 3}, {1, 2, 3, 4, 5, 6});
  const BadFile cases[] = {
      {"truncated", good.substr(0, good.size() - 2), false, Code::kDataLoss,
       "expected 18 bytes, got 16"},
      {"truncated_gz_payload", good.substr(0, good.size() - 2), true, Code::kDataLoss,
       "expected 18 bytes, got 16"},
      {"truncated_header", good.substr(0, 9), false, Code::kDataLoss, "expected 12 bytes, got 9"},
      {"empty", "", false, Code::kDataLoss, "expected 4 bytes, got 0"},
      {"trailing", good + "x", false, Code::kDataLoss, "expected 18 bytes, got 19"},
      {"wrong_magic", "\x12\x34\x56\x78" + good.substr(4), false, Code::kInvalidArgument,
       "not an IDX file: magic 0x12345678"},
      {"float_type", std::string("\0\0\x0d\x01", 4) + good.substr(4), false, Code::kInvalidArgument,
       "unsupported IDX type in magic 0x00000d01"},
      {"no_dims", std::string("\0\0\x08\0", 4), false, Code::kInvalidArgument, "magic 0x00000800"},
  };
  TempDir dir;
  for (const BadFile& c : cases) {
    const std::string path = dir.path() + "/" + c.name;
    WriteFile(path, c.bytes, c.gzip);
    StatusOr<IdxArray> array = ReadIdxFile(path);
    ASSERT_FALSE(array.ok()) << c.name;
    EXPECT_EQ(array.status().code(), c.code) << c.name << ": " << array.status().ToString();
    EXPECT_EQ(array.status().message().rfind(path + ": ", 0), 0u) << array.status().message();
    EXPECT_NE(array.status().message().find(c.message), std::string::npos)
        << c.name << ": " << array.status().message();
  }
}

TEST(ReadIdxFile, TruncatedGzipStreamIsDataLoss) {
  TempDir dir;
  std::vector<uint8_t> values(5000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = (i * 7919) % 251;
  const std::string gz = dir.path() + "/full.gz";
  WriteFile(gz, IdxBytes({5000}, values), true);
  const std::string cut = dir.path() + "/cut.gz";
  ASSERT_EQ(std::system(("head -c 100 " + gz + " > " + cut).c_str()), 0);
  StatusOr<IdxArray> array = ReadIdxFile(cut);
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().code(), Code::kDataLoss);
  EXPECT_NE(array.status().message().find(cut + ": gzip stream cut short"), std::string::npos)
      << array.status().message();
}

TEST(ReadIdxFile, MissingFileIsNotFound) {
  StatusOr<IdxArray> array = ReadIdxFile("/nonexistent/train-images-idx3-ubyte.gz");
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.status().code(), Code::kNotFound);
  EXPECT_NE(array.status().message().find("/nonexistent/train-images-idx3-ubyte.gz"),
            std::string::npos);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
