#include "data/distortions.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <vector>

namespace pstrain {
namespace data {
namespace {

// A 3x3x2 image: channel 0 of pixel (y, x) is 3y + x (0..8), channel 1 is
// 100 + 3y + x (100..108).
FloatImage Ramp() {
  FloatImage img;
  img.height = img.width = 3;
  img.depth = 2;
  for (int p = 0; p < 9; ++p) {
    img.values.push_back(static_cast<float>(p));
    img.values.push_back(static_cast<float>(100 + p));
  }
  return img;
}

FloatImage Make(int h, int w, int d, std::vector<float> values) {
  FloatImage img;
  img.height = h;
  img.width = w;
  img.depth = d;
  img.values = std::move(values);
  return img;
}

void ExpectValues(const FloatImage& img, const std::vector<float>& expected, float tolerance) {
  ASSERT_EQ(img.values.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(img.values[i], expected[i], tolerance) << "value " << i;
  }
}

TEST(ToFloatImage, CastsPixelValues) {
  ImageDataset ds;
  ds.count = 2;
  ds.rows = 1;
  ds.cols = 2;
  ds.depth = 2;
  ds.pixels = {0, 1, 2, 3, 4, 5, 255, 7};
  ds.labels = {0, 1};
  const FloatImage img = ToFloatImage(ds, 1);
  EXPECT_EQ(img.height, 1);
  EXPECT_EQ(img.width, 2);
  EXPECT_EQ(img.depth, 2);
  EXPECT_EQ(img.values, (std::vector<float>{4, 5, 255, 7}));
}

TEST(Crop, TakesTheWindowAtTheOffset) {
  const FloatImage out = Crop(Ramp(), /*top=*/1, /*left=*/0, /*height=*/2, /*width=*/2);
  EXPECT_EQ(out.height, 2);
  EXPECT_EQ(out.width, 2);
  EXPECT_EQ(out.depth, 2);
  // Pixels (1,0), (1,1), (2,0), (2,1).
  EXPECT_EQ(out.values, (std::vector<float>{3, 103, 4, 104, 6, 106, 7, 107}));
  EXPECT_EQ(Crop(Ramp(), 2, 2, 1, 1).values, (std::vector<float>{8, 108}));
}

TEST(FlipLeftRight, MirrorsEachRowKeepingChannelsTogether) {
  FloatImage img = Ramp();
  FlipLeftRight(&img);
  EXPECT_EQ(img.values, (std::vector<float>{2, 102, 1, 101, 0, 100,  //
                                            5, 105, 4, 104, 3, 103,  //
                                            8, 108, 7, 107, 6, 106}));
  FloatImage two = Make(1, 2, 1, {1, 2});
  FlipLeftRight(&two);
  EXPECT_EQ(two.values, (std::vector<float>{2, 1}));
}

TEST(AdjustBrightness, AddsTheDeltaWithoutClipping) {
  FloatImage img = Ramp();
  AdjustBrightness(-63, &img);
  EXPECT_FLOAT_EQ(img.at(0, 0, 0), -63);
  EXPECT_FLOAT_EQ(img.at(2, 2, 0), -55);
  EXPECT_FLOAT_EQ(img.at(0, 1, 1), 38);
  EXPECT_FLOAT_EQ(img.at(2, 2, 1), 45);
}

TEST(AdjustContrast, ScalesEachChannelAroundItsOwnMean) {
  // Channel means 4 and 104; factor 0.5: x -> (x - 4) / 2 + 4 and
  // x -> (x - 104) / 2 + 104.
  FloatImage img = Ramp();
  AdjustContrast(0.5f, &img);
  ExpectValues(
      img, {2, 102, 2.5, 102.5, 3, 103, 3.5, 103.5, 4, 104, 4.5, 104.5, 5, 105, 5.5, 105.5, 6, 106},
      1e-5f);
  // Factor 1.8 on a 1x2x1 image {10, 20}: mean 15, so 15 -+ 9.
  FloatImage two = Make(1, 2, 1, {10, 20});
  AdjustContrast(1.8f, &two);
  ExpectValues(two, {6, 24}, 1e-5f);
}

TEST(PerImageStandardization, UsesMeanAndStddevOfAllValues) {
  // 2x2x1 {0, 2, 4, 6}: mean 3, variance (9 + 1 + 1 + 9) / 4 = 5.
  FloatImage img = Make(2, 2, 1, {0, 2, 4, 6});
  PerImageStandardization(&img);
  const float s = std::sqrt(5.0f);
  ExpectValues(img, {-3 / s, -1 / s, 1 / s, 3 / s}, 1e-6f);

  // The ramp without its second channel's offset: channel 0 is 0..8, channel 1
  // all 0. N = 18, mean 36 / 18 = 2, mean of squares 204 / 18, so variance
  // 204 / 18 - 4 = 22 / 3.
  FloatImage ramp = Ramp();
  for (int p = 0; p < 9; ++p) ramp.values[2 * p + 1] = 0;
  PerImageStandardization(&ramp);
  const float sd = std::sqrt(22.0f / 3.0f);
  EXPECT_NEAR(ramp.at(0, 0, 0), -2 / sd, 1e-6);
  EXPECT_NEAR(ramp.at(2, 2, 0), 6 / sd, 1e-6);
  EXPECT_NEAR(ramp.at(1, 1, 1), -2 / sd, 1e-6);
}

TEST(PerImageStandardization, FloorsTheStddevAtOneOverSqrtN) {
  // {1, 1, 1, 1.2}: mean 1.05, variance 0.0075, stddev 0.087 < 1/sqrt(4) = 0.5,
  // so every value is divided by 0.5.
  FloatImage img = Make(1, 4, 1, {1, 1, 1, 1.2f});
  PerImageStandardization(&img);
  ExpectValues(img, {-0.1f, -0.1f, -0.1f, 0.3f}, 1e-6f);
  // A constant image becomes zeros, not NaN.
  FloatImage flat = Make(1, 2, 2, {7, 7, 7, 7});
  PerImageStandardization(&flat);
  ExpectValues(flat, {0, 0, 0, 0}, 0);
}

TEST(ResizeWithCropOrPad, CropsCentrallyRoundingTheOffsetDown) {
  // 3x3 -> 1x1: offset (1, 1), the centre.
  EXPECT_EQ(ResizeWithCropOrPad(Ramp(), 1, 1).values, (std::vector<float>{4, 104}));
  // 3x3 -> 2x2: offset ((3 - 2) / 2, (3 - 2) / 2) = (0, 0).
  EXPECT_EQ(ResizeWithCropOrPad(Ramp(), 2, 2).values,
            (std::vector<float>{0, 100, 1, 101, 3, 103, 4, 104}));
  // 3x3 -> 1x3: rows cropped from offset 1, columns kept.
  EXPECT_EQ(ResizeWithCropOrPad(Ramp(), 1, 3).values, (std::vector<float>{3, 103, 4, 104, 5, 105}));
  // 4x4 -> 2x2: offset (1, 1).
  FloatImage four = Make(4, 4, 1, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
  EXPECT_EQ(ResizeWithCropOrPad(four, 2, 2).values, (std::vector<float>{5, 6, 9, 10}));
}

TEST(ResizeWithCropOrPad, PadsWithZerosTheExtraAfter) {
  // 1x2x1 {1, 2} -> 3x3: rows padded (3 - 1) / 2 = 1 above, 1 below; columns
  // (3 - 2) / 2 = 0 before, 1 after.
  FloatImage img = Make(1, 2, 1, {1, 2});
  EXPECT_EQ(ResizeWithCropOrPad(img, 3, 3).values, (std::vector<float>{0, 0, 0, 1, 2, 0, 0, 0, 0}));
  // Crop one dimension, pad the other: 3x3x2 -> 1x4 takes row 1 (offset
  // (3 - 1) / 2) and pads (4 - 3) / 2 = 0 columns before it, 1 after.
  EXPECT_EQ(ResizeWithCropOrPad(Ramp(), 1, 4).values,
            (std::vector<float>{3, 103, 4, 104, 5, 105, 0, 0}));
}

TEST(PrepareForEvaluation, CentralCropThenStandardization) {
  // 3x3 -> 2x2 at (0, 0): channel 0 {0, 1, 3, 4}, channel 1 set to 0 below.
  // N = 8, mean 8 / 8 = 1, mean of squares 26 / 8 = 3.25, variance 2.25,
  // stddev 1.5.
  FloatImage ramp = Ramp();
  for (int p = 0; p < 9; ++p) ramp.values[2 * p + 1] = 0;
  const FloatImage out = PrepareForEvaluation(ramp, 2, 2);
  EXPECT_EQ(out.height, 2);
  EXPECT_EQ(out.width, 2);
  ExpectValues(out, {-1 / 1.5f, -1 / 1.5f, 0, -1 / 1.5f, 2 / 1.5f, -1 / 1.5f, 3 / 1.5f, -1 / 1.5f},
               1e-6f);
}

TEST(DistortForTraining, AppliesTheDrawsInTensorFlowsOrder) {
  // Crop 2x2 at (1, 1): channel 0 {4, 5, 7, 8}, channel 1 {104, 105, 107, 108}.
  // Flip: {5, 4, 8, 7} and {105, 104, 108, 107}.
  // Brightness +10: {15, 14, 18, 17} and {115, 114, 118, 117}.
  // Contrast 2 around means 16 and 116: {14, 12, 20, 18} and {114, 112, 120, 118}.
  // Standardization: mean 528 / 8 = 66; deviations {-52, -54, -46, -48} and
  // {48, 46, 54, 52}; variance 2 * (2704 + 2916 + 2116 + 2304) / 8 = 2510.
  DistortionParams params;
  params.crop_height = params.crop_width = 2;
  DistortionDraw draw;
  draw.crop_top = draw.crop_left = 1;
  draw.flip = true;
  draw.brightness_delta = 10;
  draw.contrast_factor = 2;
  const FloatImage out = DistortForTraining(Ramp(), params, draw);
  const float s = std::sqrt(2510.0f);
  ExpectValues(out, {-52 / s, 48 / s, -54 / s, 46 / s, -46 / s, 54 / s, -48 / s, 52 / s}, 1e-5f);
  // Without the flip, the first pixel is (1, 1): 4 -> 14 -> 12, 104 -> 114 -> 112.
  draw.flip = false;
  const FloatImage unflipped = DistortForTraining(Ramp(), params, draw);
  EXPECT_NEAR(unflipped.values[0], -54 / s, 1e-5);
  EXPECT_NEAR(unflipped.values[1], 46 / s, 1e-5);
}

TEST(DistortForTrainingInto, MatchesDistortForTraining) {
  // Random images of 3 and of 1 channel, odd sizes, with and without flips.
  struct Case {
    int rows, cols, depth, crop_height, crop_width;
  };
  const Case cases[] = {{32, 32, 3, 24, 24}, {7, 5, 1, 4, 3}, {6, 6, 2, 6, 6}};
  std::mt19937_64 rng(17);
  for (const Case& c : cases) {
    ImageDataset ds;
    ds.count = 3;
    ds.rows = c.rows;
    ds.cols = c.cols;
    ds.depth = c.depth;
    for (int64_t i = 0; i < ds.count * ds.image_size(); ++i) {
      ds.pixels.push_back(static_cast<uint8_t>(rng() % 256));
    }
    ds.labels = {0, 1, 2};
    DistortionParams params;
    params.crop_height = c.crop_height;
    params.crop_width = c.crop_width;
    std::vector<float> out(static_cast<size_t>(c.crop_height) * c.crop_width * c.depth);
    int flips = 0;
    for (int trial = 0; trial < 40; ++trial) {
      const int64_t index = trial % ds.count;
      const DistortionDraw draw = DrawDistortion(params, ds.rows, ds.cols, &rng);
      flips += draw.flip;
      DistortForTrainingInto(ds, index, params, draw, out.data());
      const FloatImage want = DistortForTraining(ToFloatImage(ds, index), params, draw);
      ASSERT_EQ(want.values.size(), out.size());
      for (size_t j = 0; j < out.size(); ++j) {
        ASSERT_NEAR(out[j], want.values[j], 1e-6f * (1 + std::abs(want.values[j])))
            << c.rows << "x" << c.cols << "x" << c.depth << " trial " << trial << " value " << j;
      }
    }
    EXPECT_GT(flips, 0);
    EXPECT_LT(flips, 40);
  }
}

TEST(DrawDistortion, DrawsInTensorFlowsRangesReproducibly) {
  const DistortionParams params;  // 24x24 crop, delta 63, contrast [0.2, 1.8)
  std::mt19937_64 rng(42);
  std::set<int> tops, lefts;
  int flips = 0;
  float min_delta = 1e9f, max_delta = -1e9f, min_factor = 1e9f, max_factor = -1e9f;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const DistortionDraw d = DrawDistortion(params, 32, 28, &rng);
    ASSERT_GE(d.crop_top, 0);
    ASSERT_LE(d.crop_top, 8);
    ASSERT_GE(d.crop_left, 0);
    ASSERT_LE(d.crop_left, 4);
    tops.insert(d.crop_top);
    lefts.insert(d.crop_left);
    flips += d.flip;
    min_delta = std::min(min_delta, d.brightness_delta);
    max_delta = std::max(max_delta, d.brightness_delta);
    min_factor = std::min(min_factor, d.contrast_factor);
    max_factor = std::max(max_factor, d.contrast_factor);
  }
  EXPECT_EQ(tops.size(), 9u);
  EXPECT_EQ(lefts.size(), 5u);
  EXPECT_NEAR(flips, n / 2, 400);
  EXPECT_GE(min_delta, -63);
  EXPECT_LT(min_delta, -62.5);
  EXPECT_LT(max_delta, 63);
  EXPECT_GT(max_delta, 62.5);
  EXPECT_GE(min_factor, 0.2f);
  EXPECT_LT(min_factor, 0.21f);
  EXPECT_LT(max_factor, 1.8f);
  EXPECT_GT(max_factor, 1.79f);

  std::mt19937_64 a(7), b(7), c(8);
  const DistortionDraw da = DrawDistortion(params, 32, 32, &a);
  const DistortionDraw db = DrawDistortion(params, 32, 32, &b);
  EXPECT_EQ(da.crop_top, db.crop_top);
  EXPECT_EQ(da.crop_left, db.crop_left);
  EXPECT_EQ(da.flip, db.flip);
  EXPECT_EQ(da.brightness_delta, db.brightness_delta);
  EXPECT_EQ(da.contrast_factor, db.contrast_factor);
  const DistortionDraw dc = DrawDistortion(params, 32, 32, &c);
  EXPECT_NE(da.brightness_delta, dc.brightness_delta);
}

TEST(DrawDistortion, CropOfTheWholeImageHasOffsetZero) {
  DistortionParams params;
  params.crop_height = 5;
  params.crop_width = 3;
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100; ++i) {
    const DistortionDraw d = DrawDistortion(params, 5, 3, &rng);
    EXPECT_EQ(d.crop_top, 0);
    EXPECT_EQ(d.crop_left, 0);
  }
}

TEST(CheckDistortionParams, RejectsWhatCannotBeDrawn) {
  DistortionParams ok;
  PS_EXPECT_OK(CheckDistortionParams(ok, 24, 24));
  struct Case {
    DistortionParams params;
    int height, width;
    const char* message;
  };
  const Case cases[] = {
      {{25, 24, 63, 0.2f, 1.8f}, 24, 24, "crop 25x24 does not fit a 24x24 image"},
      {{24, 24, 63, 0.2f, 1.8f}, 32, 20, "crop 24x24 does not fit a 32x20 image"},
      {{0, 24, 63, 0.2f, 1.8f}, 32, 32, "crop 0x24"},
      {{24, 24, -1, 0.2f, 1.8f}, 32, 32, "is negative"},
      {{24, 24, 63, -0.1f, 1.8f}, 32, 32, "needs 0 <= lower <= upper"},
      {{24, 24, 63, 1.8f, 0.2f}, 32, 32, "needs 0 <= lower <= upper"},
  };
  for (const Case& c : cases) {
    const Status s = CheckDistortionParams(c.params, c.height, c.width);
    EXPECT_EQ(s.code(), Code::kInvalidArgument) << c.message;
    EXPECT_NE(s.message().find(c.message), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace data
}  // namespace pstrain
