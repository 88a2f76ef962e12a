#include "data/mnist_dataset.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

TEST(LoadMnistSplit, LoadsGzipAndPlainSplits) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 12, 3, 2, /*gzip=*/true);
  WriteMnistSplit(dir.path(), "t10k", 5, 3, 2, /*gzip=*/false);
  StatusOr<ImageDataset> train = LoadMnistSplit(dir.path(), "train");
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->count, 12);
  EXPECT_EQ(train->rows, 3);
  EXPECT_EQ(train->cols, 2);
  EXPECT_EQ(train->depth, 1);
  EXPECT_EQ(train->pixels.size(), 12u * 6);
  EXPECT_EQ(train->pixels[6 * 11 + 5], 16);
  EXPECT_EQ(train->labels[11], 1);
  StatusOr<ImageDataset> test = LoadMnistSplit(dir.path(), "t10k");
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->count, 5);
}

TEST(LoadMnistSplit, RejectsUnknownSplit) {
  StatusOr<ImageDataset> ds = LoadMnistSplit("/tmp", "validation");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("\"validation\""), std::string::npos);
}

TEST(LoadMnistSplit, MissingFileIsNotFound) {
  TempDir dir;
  StatusOr<ImageDataset> ds = LoadMnistSplit(dir.path(), "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kNotFound);
  EXPECT_NE(ds.status().message().find(dir.path() + "/train-images-idx3-ubyte[.gz]"),
            std::string::npos)
      << ds.status().message();
}

// A worker's shard read from the files is what the whole split cut to it
// holds, and says which shard it is.
TEST(LoadMnistSplit, ReadsOnlyASubsetAsTheWholeSplitCutToIt) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 11, 3, 2, /*gzip=*/true);
  StatusOr<ImageDataset> whole = LoadMnistSplit(dir.path(), "train");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ExampleSubset keep;
  keep.shard = {2, 3};
  keep.limit = 10;
  StatusOr<ImageDataset> shard = LoadMnistSplit(dir.path(), "train", keep);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  ImageDataset cut = *whole;
  KeepFirst(10, &cut);
  KeepShard({2, 3}, &cut);
  EXPECT_EQ(shard->count, 3);  // examples 2, 5, 8
  EXPECT_EQ(shard->count, cut.count);
  EXPECT_EQ(shard->pixels, cut.pixels);
  EXPECT_EQ(shard->labels, cut.labels);
  EXPECT_EQ(shard->shard, Shard({2, 3}));
  EXPECT_EQ(shard->rows, 3);
  EXPECT_EQ(shard->cols, 2);
}

TEST(LoadMnistSplit, RejectsMismatchedCounts) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 4, 2, 2, false);
  WriteFile(dir.path() + "/train-labels-idx1-ubyte", IdxBytes({3}, {0, 1, 2}), false);
  StatusOr<ImageDataset> ds = LoadMnistSplit(dir.path(), "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("holds 4 images but"), std::string::npos)
      << ds.status().message();
  EXPECT_NE(ds.status().message().find("holds 3 labels"), std::string::npos);
}

TEST(LoadMnistSplit, RejectsLabelsOutOfRange) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 3, 2, 2, false);
  WriteFile(dir.path() + "/train-labels-idx1-ubyte", IdxBytes({3}, {0, 10, 2}), false);
  StatusOr<ImageDataset> ds = LoadMnistSplit(dir.path(), "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("label 10 of example 1 is not in 0..9"), std::string::npos)
      << ds.status().message();
  // A shard's error names the example's place in the split: the second
  // example of shard 1 of 2 is example 3.
  WriteMnistSplit(dir.path(), "train", 5, 2, 2, false);
  WriteFile(dir.path() + "/train-labels-idx1-ubyte", IdxBytes({5}, {0, 1, 2, 10, 4}), false);
  ExampleSubset odd;
  odd.shard = {1, 2};
  ds = LoadMnistSplit(dir.path(), "train", odd);
  PS_ASSERT_CODE(ds, Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("label 10 of example 3 is not in 0..9"), std::string::npos)
      << ds.status().message();
}

TEST(LoadMnistSplit, RejectsWrongRank) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 3, 2, 2, false);
  WriteFile(dir.path() + "/train-images-idx3-ubyte", IdxBytes({3, 4}, std::vector<uint8_t>(12)),
            false);
  StatusOr<ImageDataset> ds = LoadMnistSplit(dir.path(), "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("images have shape [3,4]"), std::string::npos)
      << ds.status().message();
}

TEST(LoadMnistSplit, PropagatesTruncation) {
  TempDir dir;
  WriteMnistSplit(dir.path(), "train", 3, 2, 2, false);
  WriteFile(dir.path() + "/train-images-idx3-ubyte", IdxBytes({3, 2, 2}, std::vector<uint8_t>(11)),
            false);
  StatusOr<ImageDataset> ds = LoadMnistSplit(dir.path(), "train");
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kDataLoss);
}

// Three 1x2 images.
ImageDataset ThreeTinyImages() {
  ImageDataset ds;
  ds.count = 3;
  ds.rows = 1;
  ds.cols = 2;
  ds.pixels = {0, 255, 51, 102, 1, 2};
  ds.labels = {0, 1, 2};
  return ds;
}

TEST(NormalizeImages, ScalesToMinusHalfPlusHalf) {
  ImageDataset ds = ThreeTinyImages();
  Tensor out;
  NormalizeImages(ds, 1, 2, &out);
  EXPECT_EQ(out.shape(), (Shape{2, 1, 2, 1}));
  EXPECT_FLOAT_EQ(out[0], 51 / 255.0f - 0.5f);
  EXPECT_FLOAT_EQ(out[1], 102 / 255.0f - 0.5f);
  EXPECT_FLOAT_EQ(out[2], 1 / 255.0f - 0.5f);
  NormalizeImages(ds, 0, 1, &out);
  EXPECT_EQ(out.shape(), (Shape{1, 1, 2, 1}));
  EXPECT_FLOAT_EQ(out[0], -0.5f);
  EXPECT_FLOAT_EQ(out[1], 0.5f);
}

TEST(NormalizeImages, KeepsEveryChannelOfDeeperImages) {
  ImageDataset ds;  // two 1x2 images of 3 channels, HWC
  ds.count = 2;
  ds.rows = 1;
  ds.cols = 2;
  ds.depth = 3;
  ds.pixels = {0, 51, 102, 153, 204, 255, 255, 204, 153, 102, 51, 0};
  ds.labels = {4, 5};
  EXPECT_EQ(ds.image_size(), 6);
  Tensor out;
  NormalizeImages(ds, 1, 1, &out);
  EXPECT_EQ(out.shape(), (Shape{1, 1, 2, 3}));
  const float expected[] = {0.5f, 0.3f, 0.1f, -0.1f, -0.3f, -0.5f};
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(out[i], expected[i], 1e-6) << i;
  float one[6];
  NormalizeImage(ds, 0, one);
  EXPECT_FLOAT_EQ(one[2], 102 / 255.0f - 0.5f);
  EXPECT_FLOAT_EQ(one[5], 0.5f);
}

TEST(KeepFirst, KeepsWholeImagesOfEveryChannel) {
  ImageDataset ds;
  ds.count = 3;
  ds.rows = 1;
  ds.cols = 1;
  ds.depth = 2;
  ds.pixels = {1, 2, 3, 4, 5, 6};
  ds.labels = {0, 1, 2};
  KeepFirst(2, &ds);
  EXPECT_EQ(ds.pixels, (std::vector<uint8_t>{1, 2, 3, 4}));
}

TEST(KeepShard, KeepsEveryNthExampleFromItsIndexInOrderAndGivesBackTheRest) {
  ImageDataset ds;
  ds.count = 7;
  ds.rows = ds.cols = 1;
  ds.depth = 2;
  for (int i = 0; i < 7; ++i) {
    ds.pixels.insert(ds.pixels.end(), {static_cast<uint8_t>(10 * i), static_cast<uint8_t>(i)});
    ds.labels.push_back(i);
  }
  KeepShard({1, 3}, &ds);  // examples 1 and 4
  EXPECT_EQ(ds.count, 2);
  EXPECT_EQ(ds.pixels, (std::vector<uint8_t>{10, 1, 40, 4}));
  EXPECT_EQ(ds.labels, (std::vector<int32_t>{1, 4}));
  EXPECT_EQ(ds.pixels.capacity(), ds.pixels.size());
  EXPECT_EQ(ds.shard, Shard({1, 3}));
  KeepShard({0, 2}, &ds);  // already a shard: kept as it is
  EXPECT_EQ(ds.count, 2);
  KeepShard({0, 1}, &ds);
  EXPECT_EQ(ds.labels, (std::vector<int32_t>{1, 4}));
}

TEST(KeepFirst, KeepsTheFirstNExamples) {
  ImageDataset ds = ThreeTinyImages();
  KeepFirst(0, &ds);
  EXPECT_EQ(ds.count, 3);
  KeepFirst(9, &ds);
  EXPECT_EQ(ds.count, 3);
  KeepFirst(2, &ds);
  EXPECT_EQ(ds.count, 2);
  EXPECT_EQ(ds.pixels, (std::vector<uint8_t>{0, 255, 51, 102}));
  EXPECT_EQ(ds.labels, (std::vector<int32_t>{0, 1}));
}

TEST(LoadMnistSplit, ReadsRealFashionMnist) {
  struct stat st;
  if (stat((std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz").c_str(), &st) != 0) {
    GTEST_SKIP() << "Fashion-MNIST not installed in " << kFashionMnistDir;
  }
  StatusOr<ImageDataset> train = LoadMnistSplit(kFashionMnistDir, "train");
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->count, 60000);
  EXPECT_EQ(train->rows, 28);
  EXPECT_EQ(train->cols, 28);
  std::vector<int> per_class(10);
  for (int32_t label : train->labels) ++per_class[label];
  EXPECT_EQ(per_class, std::vector<int>(10, 6000));
  StatusOr<ImageDataset> test = LoadMnistSplit(kFashionMnistDir, "t10k");
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->count, 10000);
  EXPECT_EQ(test->rows, 28);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
