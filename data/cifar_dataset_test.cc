#include "data/cifar_dataset.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

constexpr int kPlane = 1024;

// One record in the file layout: `label`, then the R, G and B planes, every
// value `fill` except for the (plane, index) -> value marks.
std::string Record(uint8_t label, uint8_t fill,
                   const std::vector<std::pair<std::pair<int, int>, uint8_t>>& marks = {}) {
  std::string r(3073, static_cast<char>(fill));
  r[0] = static_cast<char>(label);
  for (const auto& [where, value] : marks) {
    r[1 + where.first * kPlane + where.second] = static_cast<char>(value);
  }
  return r;
}

// Writes the five train files (`per_file` records each, labels 0, 1, ... in
// file order and every pixel equal to the record's number) into `dir`.
void WriteTrainFiles(const std::string& dir, int per_file) {
  int n = 0;
  for (const std::string& name : Cifar10FileNames("train")) {
    std::string bytes;
    for (int i = 0; i < per_file; ++i, ++n) bytes += Record(n % 10, static_cast<uint8_t>(n));
    WriteFile(dir + "/" + name, bytes, /*gzip=*/false);
  }
}

TEST(ReadCifar10File, ConvertsThePlanesToHwc) {
  TempDir dir;
  const std::string path = dir.path() + "/test_batch.bin";
  // Pixel (y, x) is index 32 * y + x of each plane.
  WriteFile(path,
            Record(3, 0,
                   {{{0, 0}, 11},        // R of (0, 0)
                    {{1, 0}, 22},        // G of (0, 0)
                    {{2, 0}, 33},        // B of (0, 0)
                    {{0, 1}, 44},        // R of (0, 1)
                    {{1, 32}, 66},       // G of (1, 0)
                    {{2, 1023}, 55}}) +  // B of (31, 31)
                Record(9, 200),
            false);
  StatusOr<ImageDataset> ds = ReadCifar10File(path);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->count, 2);
  EXPECT_EQ(ds->rows, 32);
  EXPECT_EQ(ds->cols, 32);
  EXPECT_EQ(ds->depth, 3);
  EXPECT_EQ(ds->labels, (std::vector<int32_t>{3, 9}));
  ASSERT_EQ(ds->pixels.size(), 2u * 3072);
  EXPECT_EQ(ds->pixels[0], 11);
  EXPECT_EQ(ds->pixels[1], 22);
  EXPECT_EQ(ds->pixels[2], 33);
  EXPECT_EQ(ds->pixels[3], 44);
  EXPECT_EQ(ds->pixels[4], 0);
  EXPECT_EQ(ds->pixels[(32 * 1 + 0) * 3 + 1], 66);
  EXPECT_EQ(ds->pixels[(32 * 31 + 31) * 3 + 2], 55);
  EXPECT_EQ(ds->pixels[3071], 55);
  int marked = 0;
  for (int i = 0; i < 3072; ++i) marked += ds->pixels[i] != 0;
  EXPECT_EQ(marked, 6);
  EXPECT_EQ(ds->pixels[3072], 200);
  EXPECT_EQ(ds->pixels[2 * 3072 - 1], 200);
}

TEST(AppendCifar10Record, WritesTheLabelThenThePlanes) {
  std::vector<uint8_t> hwc(3072, 0);
  hwc[0] = 1;                     // R of (0, 0)
  hwc[2] = 2;                     // B of (0, 0)
  hwc[(32 * 2 + 5) * 3 + 1] = 3;  // G of (2, 5)
  std::string out = "x";
  AppendCifar10Record(7, hwc.data(), &out);
  ASSERT_EQ(out.size(), 1u + 3073);
  EXPECT_EQ(out[1], 7);
  EXPECT_EQ(out[2 + 0], 1);
  EXPECT_EQ(out[2 + 2 * kPlane], 2);
  EXPECT_EQ(out[2 + kPlane + 32 * 2 + 5], 3);
}

TEST(LoadCifar10Split, LoadsTheFiveTrainFilesInOrderFromEitherFolder) {
  TempDir dir;
  const std::string nested = dir.path() + "/cifar-10-batches-bin";
  ASSERT_EQ(mkdir(nested.c_str(), 0755), 0);
  WriteTrainFiles(nested, 2);
  for (const std::string& data_dir : {dir.path(), nested}) {
    StatusOr<ImageDataset> ds = LoadCifar10Split(data_dir, "train");
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    EXPECT_EQ(ds->count, 10);
    EXPECT_EQ(ds->labels, (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
    ASSERT_EQ(ds->pixels.size(), 10u * 3072);
    for (int i = 0; i < 10; ++i) EXPECT_EQ(ds->pixels[i * 3072 + 1000], i) << i;
  }
}

TEST(LoadCifar10Split, LoadsTheTestFile) {
  TempDir dir;
  WriteFile(dir.path() + "/test_batch.bin", Record(4, 1) + Record(5, 2) + Record(6, 3), false);
  StatusOr<ImageDataset> ds = LoadCifar10Split(dir.path(), "test");
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->count, 3);
  EXPECT_EQ(ds->labels, (std::vector<int32_t>{4, 5, 6}));
}

TEST(LoadCifar10Split, ShortFileIsDataLossNamingTheShortRecord) {
  TempDir dir;
  const std::string path = dir.path() + "/test_batch.bin";
  WriteFile(path, Record(1, 1) + Record(2, 2) + std::string(100, '\0'), false);
  StatusOr<ImageDataset> ds = LoadCifar10Split(dir.path(), "test");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kDataLoss);
  EXPECT_NE(ds.status().message().find(path + ": 6246 bytes"), std::string::npos)
      << ds.status().message();
  EXPECT_NE(ds.status().message().find("record 2 is short (100 of 3073 bytes)"), std::string::npos)
      << ds.status().message();
}

TEST(LoadCifar10Split, EmptyFileIsDataLoss) {
  TempDir dir;
  WriteFile(dir.path() + "/test_batch.bin", "", false);
  StatusOr<ImageDataset> ds = LoadCifar10Split(dir.path(), "test");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kDataLoss);
}

TEST(LoadCifar10Split, LabelAboveNineIsInvalidArgument) {
  TempDir dir;
  const std::string path = dir.path() + "/test_batch.bin";
  WriteFile(path, Record(9, 0) + Record(10, 0) + Record(0, 0), false);
  StatusOr<ImageDataset> ds = LoadCifar10Split(dir.path(), "test");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find(path + ": record 1 has label 10, not in 0..9"),
            std::string::npos)
      << ds.status().message();
}

TEST(LoadCifar10Split, MissingFileIsNotFoundNamingIt) {
  TempDir dir;
  WriteTrainFiles(dir.path(), 1);
  ASSERT_EQ(std::remove((dir.path() + "/data_batch_4.bin").c_str()), 0);
  StatusOr<ImageDataset> ds = LoadCifar10Split(dir.path(), "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kNotFound);
  EXPECT_NE(ds.status().message().find(dir.path() + "/data_batch_4.bin"), std::string::npos)
      << ds.status().message();
}

TEST(LoadCifar10Split, NoFilesIsNotFoundNamingBothFolders) {
  TempDir dir;
  StatusOr<ImageDataset> ds = LoadCifar10Split(dir.path(), "test");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kNotFound);
  EXPECT_NE(ds.status().message().find(dir.path() + "/cifar-10-batches-bin/test_batch.bin"),
            std::string::npos)
      << ds.status().message();
  EXPECT_NE(ds.status().message().find(dir.path() + "/test_batch.bin"), std::string::npos);
}

TEST(LoadCifar10Split, UnknownSplitIsInvalidArgument) {
  StatusOr<ImageDataset> ds = LoadCifar10Split("/tmp", "t10k");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("\"t10k\""), std::string::npos);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
