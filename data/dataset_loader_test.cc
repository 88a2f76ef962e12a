#include "data/dataset_loader.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "data/cifar_dataset.h"
#include "data/example_dataset.h"
#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

// `count` CIFAR-10 records whose labels are first_label, first_label + 1, ...
std::string CifarRecords(int count, int first_label) {
  std::string bytes;
  for (int i = 0; i < count; ++i) {
    bytes.push_back(static_cast<char>((first_label + i) % 10));
    bytes.append(3072, static_cast<char>(i));
  }
  return bytes;
}

void WriteCifar(const std::string& dir) {
  for (int i = 1; i <= 5; ++i) {
    WriteFile(dir + "/data_batch_" + std::to_string(i) + ".bin", CifarRecords(1, i), false);
  }
  WriteFile(dir + "/test_batch.bin", CifarRecords(2, 0), false);
}

// A 1x1x1 dataset of `count` images with labels 0, 1, ...
ImageDataset Tiny(int count) {
  ImageDataset ds;
  ds.count = count;
  ds.rows = ds.cols = ds.depth = 1;
  for (int i = 0; i < count; ++i) {
    ds.pixels.push_back(static_cast<uint8_t>(100 + i));
    ds.labels.push_back(i % 10);
  }
  return ds;
}

TEST(LoadDataset, AutoFindsIdxAndMapsTestToT10k) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 6, 2, 2, /*gzip=*/true);
  WriteMnistSplit(dir.path(), "t10k", 4, 2, 2, /*gzip=*/false);
  EXPECT_EQ(DetectDatasetFormat(dir.path(), "train").value(), "idx");
  StatusOr<ImageDataset> train = LoadDataset(dir.path(), "auto", "train");
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->count, 6);
  StatusOr<ImageDataset> test = LoadDataset(dir.path(), "auto", "test");
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->count, 4);
  EXPECT_EQ(test->depth, 1);
  StatusOr<ImageDataset> named = LoadDataset(dir.path(), "idx", "test");
  ASSERT_TRUE(named.ok()) << named.status().ToString();
  EXPECT_EQ(named->count, 4);
}

TEST(LoadDataset, AutoFindsCifarInEitherFolder) {
  TempDir dir;
  const std::string nested = dir.path() + "/cifar-10-batches-bin";
  ASSERT_EQ(mkdir(nested.c_str(), 0755), 0);
  WriteCifar(nested);
  for (const std::string& data_dir : {dir.path(), nested}) {
    EXPECT_EQ(DetectDatasetFormat(data_dir, "test").value(), "cifar");
    StatusOr<ImageDataset> train = LoadDataset(data_dir, "auto", "train");
    ASSERT_TRUE(train.ok()) << train.status().ToString();
    EXPECT_EQ(train->count, 5);
    EXPECT_EQ(train->labels, (std::vector<int32_t>{1, 2, 3, 4, 5}));
    EXPECT_EQ(train->depth, 3);
    StatusOr<ImageDataset> test = LoadDataset(data_dir, "cifar", "test");
    ASSERT_TRUE(test.ok()) << test.status().ToString();
    EXPECT_EQ(test->count, 2);
  }
}

TEST(LoadDataset, AutoFindsTfRecordsPlainOrGzip) {
  TempDir dir;
  ASSERT_TRUE(
      WriteExampleFile(Tiny(3), dir.path() + "/train.tfrecords.gz", TfRecordCompression::kGzip)
          .ok());
  ASSERT_TRUE(
      WriteExampleFile(Tiny(2), dir.path() + "/test.tfrecords", TfRecordCompression::kNone).ok());
  EXPECT_EQ(FindTfRecordFile(dir.path(), "train").value(), dir.path() + "/train.tfrecords.gz");
  StatusOr<ImageDataset> train = LoadDataset(dir.path(), "auto", "train");
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->pixels, (std::vector<uint8_t>{100, 101, 102}));
  StatusOr<ImageDataset> test = LoadDataset(dir.path(), "tfrecord", "test");
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->count, 2);
}

TEST(LoadDataset, NoFilesIsNotFoundListingWhatItLookedFor) {
  TempDir dir;
  StatusOr<ImageDataset> ds = LoadDataset(dir.path(), "auto", "test");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kNotFound);
  const std::string& m = ds.status().message();
  for (const std::string& looked_for :
       {dir.path() + "/t10k-images-idx3-ubyte[.gz]",
        dir.path() + "/cifar-10-batches-bin/test_batch.bin", dir.path() + "/test_batch.bin",
        dir.path() + "/test.tfrecords[.gz]"}) {
    EXPECT_NE(m.find(looked_for), std::string::npos) << looked_for << " not in " << m;
  }
}

TEST(LoadDataset, SeveralFormatsIsInvalidArgumentUnlessNamed) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 6, 2, 2, false);
  ASSERT_TRUE(
      WriteExampleFile(Tiny(3), dir.path() + "/train.tfrecords", TfRecordCompression::kNone).ok());
  StatusOr<ImageDataset> ds = LoadDataset(dir.path(), "auto", "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("(idx, tfrecord)"), std::string::npos)
      << ds.status().message();
  EXPECT_EQ(LoadDataset(dir.path(), "idx", "train")->count, 6);
  EXPECT_EQ(LoadDataset(dir.path(), "tfrecord", "train")->count, 3);
}

TEST(LoadDataset, NamedFormatWithoutItsFilesIsNotFound) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 6, 2, 2, false);
  struct Case {
    const char* format;
    std::string missing;
  };
  for (const Case& c : {Case{"cifar", dir.path() + "/data_batch_1.bin"},
                        Case{"tfrecord", dir.path() + "/train.tfrecords[.gz]"}}) {
    StatusOr<ImageDataset> ds = LoadDataset(dir.path(), c.format, "train");
    ASSERT_FALSE(ds.ok()) << c.format;
    EXPECT_EQ(ds.status().code(), Code::kNotFound) << c.format;
    EXPECT_NE(ds.status().message().find(c.missing), std::string::npos) << ds.status().message();
  }
}

TEST(LoadDataset, UnknownFormatOrSplitIsInvalidArgument) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 6, 2, 2, false);
  StatusOr<ImageDataset> ds = LoadDataset(dir.path(), "png", "train");
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("\"png\""), std::string::npos);
  for (const char* format : {"auto", "idx", "cifar", "tfrecord"}) {
    ds = LoadDataset(dir.path(), format, "t10k");
    EXPECT_EQ(ds.status().code(), Code::kInvalidArgument) << format;
    EXPECT_NE(ds.status().message().find("\"t10k\""), std::string::npos) << format;
  }
}

TEST(LoadDataset, PassesTheReadersErrorsOn) {
  TempDir dir;
  WriteFile(dir.path() + "/test.tfrecords", "garbage", false);
  StatusOr<ImageDataset> ds = LoadDataset(dir.path(), "auto", "test");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kDataLoss);
  EXPECT_NE(ds.status().message().find(dir.path() + "/test.tfrecords: "), std::string::npos)
      << ds.status().message();
}

}  // namespace
}  // namespace data
}  // namespace pstrain
