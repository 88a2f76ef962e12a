#include "data/distortions.h"

#include <glog/logging.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace pstrain {
namespace data {
namespace {

// Uniform in [0, n), without modulo bias.
uint64_t UniformIndex(uint64_t n, std::mt19937_64* rng) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const uint64_t limit = max - max % n;
  uint64_t v;
  do {
    v = (*rng)();
  } while (v >= limit);
  return v % n;
}

// Uniform in [lo, hi): 53 random bits scaled, as a double, then rounded.
float UniformReal(float lo, float hi, std::mt19937_64* rng) {
  const double unit = static_cast<double>((*rng)() >> 11) * 0x1.0p-53;
  const float v = static_cast<float>(lo + (static_cast<double>(hi) - lo) * unit);
  return v < hi || lo == hi ? v : lo;  // rounding must not reach hi
}

}  // namespace

FloatImage ToFloatImage(const ImageDataset& ds, int64_t index) {
  CHECK(index >= 0 && index < ds.count) << "image " << index << " of " << ds.count;
  FloatImage img;
  img.height = ds.rows;
  img.width = ds.cols;
  img.depth = ds.depth;
  const int64_t size = ds.image_size();
  const uint8_t* src = ds.pixels.data() + index * size;
  img.values.assign(src, src + size);
  return img;
}

FloatImage Crop(const FloatImage& in, int top, int left, int height, int width) {
  CHECK(top >= 0 && left >= 0 && height > 0 && width > 0 && top + height <= in.height &&
        left + width <= in.width)
      << "crop " << height << "x" << width << " at (" << top << ", " << left << ") of a "
      << in.height << "x" << in.width << " image";
  FloatImage out;
  out.height = height;
  out.width = width;
  out.depth = in.depth;
  out.values.reserve(static_cast<size_t>(height) * width * in.depth);
  for (int y = 0; y < height; ++y) {
    const float* row = &in.values[(int64_t{top + y} * in.width + left) * in.depth];
    out.values.insert(out.values.end(), row, row + int64_t{width} * in.depth);
  }
  return out;
}

void FlipLeftRight(FloatImage* img) {
  for (int y = 0; y < img->height; ++y) {
    for (int x = 0, mirror = img->width - 1; x < mirror; ++x, --mirror) {
      for (int c = 0; c < img->depth; ++c) std::swap(img->at(y, x, c), img->at(y, mirror, c));
    }
  }
}

void AdjustBrightness(float delta, FloatImage* img) {
  for (float& v : img->values) v += delta;
}

void AdjustContrast(float factor, FloatImage* img) {
  const int64_t pixels = int64_t{img->height} * img->width;
  if (pixels == 0) return;
  for (int c = 0; c < img->depth; ++c) {
    double sum = 0;
    for (int64_t i = 0; i < pixels; ++i) sum += img->values[i * img->depth + c];
    const float mean = static_cast<float>(sum / pixels);
    for (int64_t i = 0; i < pixels; ++i) {
      float& v = img->values[i * img->depth + c];
      v = (v - mean) * factor + mean;
    }
  }
}

void PerImageStandardization(FloatImage* img) {
  const size_t n = img->values.size();
  if (n == 0) return;
  double sum = 0;
  for (float v : img->values) sum += v;
  const double mean = sum / n;
  double squares = 0;
  for (float v : img->values) squares += (v - mean) * (v - mean);
  const double stddev = std::sqrt(squares / n);
  const double adjusted = std::max(stddev, 1.0 / std::sqrt(static_cast<double>(n)));
  for (float& v : img->values) v = static_cast<float>((v - mean) / adjusted);
}

FloatImage ResizeWithCropOrPad(const FloatImage& in, int height, int width) {
  CHECK(height > 0 && width > 0) << "target " << height << "x" << width;
  // Crop what is too large, centrally.
  const int crop_h = std::min(height, in.height), crop_w = std::min(width, in.width);
  const FloatImage cropped =
      Crop(in, (in.height - crop_h) / 2, (in.width - crop_w) / 2, crop_h, crop_w);
  if (crop_h == height && crop_w == width) return cropped;
  // Pad what is too small with zeros, the extra row or column after.
  FloatImage out;
  out.height = height;
  out.width = width;
  out.depth = in.depth;
  out.values.assign(static_cast<size_t>(height) * width * in.depth, 0.0f);
  const int top = (height - crop_h) / 2, left = (width - crop_w) / 2;
  for (int y = 0; y < crop_h; ++y) {
    for (int x = 0; x < crop_w; ++x) {
      for (int c = 0; c < in.depth; ++c) out.at(top + y, left + x, c) = cropped.at(y, x, c);
    }
  }
  return out;
}

Status CheckDistortionParams(const DistortionParams& params, int height, int width) {
  if (params.crop_height < 1 || params.crop_width < 1 || params.crop_height > height ||
      params.crop_width > width) {
    return InvalidArgument("crop " + std::to_string(params.crop_height) + "x" +
                           std::to_string(params.crop_width) + " does not fit a " +
                           std::to_string(height) + "x" + std::to_string(width) + " image");
  }
  if (!(params.max_brightness_delta >= 0)) {
    return InvalidArgument("max_brightness_delta " + std::to_string(params.max_brightness_delta) +
                           " is negative");
  }
  if (!(params.contrast_lower >= 0 && params.contrast_lower <= params.contrast_upper)) {
    return InvalidArgument("contrast range [" + std::to_string(params.contrast_lower) + ", " +
                           std::to_string(params.contrast_upper) + ") needs 0 <= lower <= upper");
  }
  return OkStatus();
}

DistortionDraw DrawDistortion(const DistortionParams& params, int height, int width,
                              std::mt19937_64* rng) {
  CHECK(CheckDistortionParams(params, height, width).ok())
      << CheckDistortionParams(params, height, width).ToString();
  DistortionDraw draw;
  draw.crop_top = static_cast<int>(UniformIndex(height - params.crop_height + 1, rng));
  draw.crop_left = static_cast<int>(UniformIndex(width - params.crop_width + 1, rng));
  draw.flip = UniformReal(0, 1, rng) < 0.5f;
  draw.brightness_delta =
      UniformReal(-params.max_brightness_delta, params.max_brightness_delta, rng);
  draw.contrast_factor = UniformReal(params.contrast_lower, params.contrast_upper, rng);
  return draw;
}

FloatImage DistortForTraining(const FloatImage& in, const DistortionParams& params,
                              const DistortionDraw& draw) {
  FloatImage img = Crop(in, draw.crop_top, draw.crop_left, params.crop_height, params.crop_width);
  if (draw.flip) FlipLeftRight(&img);
  AdjustBrightness(draw.brightness_delta, &img);
  AdjustContrast(draw.contrast_factor, &img);
  PerImageStandardization(&img);
  return img;
}

void DistortForTrainingInto(const ImageDataset& ds, int64_t index, const DistortionParams& params,
                            const DistortionDraw& draw, float* dst) {
  const int height = params.crop_height, width = params.crop_width, depth = ds.depth;
  CHECK(index >= 0 && index < ds.count) << "image " << index << " of " << ds.count;
  CHECK(draw.crop_top >= 0 && draw.crop_left >= 0 && height > 0 && width > 0 &&
        draw.crop_top + height <= ds.rows && draw.crop_left + width <= ds.cols)
      << "crop " << height << "x" << width << " at (" << draw.crop_top << ", " << draw.crop_left
      << ") of a " << ds.rows << "x" << ds.cols << " image";
  const uint8_t* image = ds.pixels.data() + index * ds.image_size();
  const int64_t pixels = int64_t{height} * width;
  const int64_t n = pixels * depth;

  // Crop, flip and brightness in one pass: output pixel (y, x) is source
  // pixel (top + y, left + x), or (top + y, left + width - 1 - x) flipped.
  const float delta = draw.brightness_delta;
  for (int y = 0; y < height; ++y) {
    const uint8_t* row = image + (int64_t{draw.crop_top + y} * ds.cols + draw.crop_left) * depth;
    float* out = dst + int64_t{y} * width * depth;
    if (!draw.flip) {
      for (int64_t i = 0; i < int64_t{width} * depth; ++i)
        out[i] = static_cast<float>(row[i]) + delta;
    } else {
      for (int x = 0; x < width; ++x) {
        const uint8_t* px = row + int64_t{width - 1 - x} * depth;
        for (int c = 0; c < depth; ++c) out[x * depth + c] = static_cast<float>(px[c]) + delta;
      }
    }
  }

  // Contrast, as AdjustContrast: each channel's mean from a double sum in
  // pixel order, then x -> (x - mean) * factor + mean.
  const float factor = draw.contrast_factor;
  for (int c = 0; c < depth; ++c) {
    double sum = 0;
    for (int64_t i = 0; i < pixels; ++i) sum += dst[i * depth + c];
    const float mean = static_cast<float>(sum / pixels);
    for (int64_t i = 0; i < pixels; ++i) {
      float& v = dst[i * depth + c];
      v = (v - mean) * factor + mean;
    }
  }

  // Standardization, as PerImageStandardization.
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += dst[i];
  const double mean = sum / n;
  double squares = 0;
  for (int64_t i = 0; i < n; ++i) squares += (dst[i] - mean) * (dst[i] - mean);
  const double stddev = std::sqrt(squares / n);
  const double adjusted = std::max(stddev, 1.0 / std::sqrt(static_cast<double>(n)));
  for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<float>((dst[i] - mean) / adjusted);
}

FloatImage PrepareForEvaluation(const FloatImage& in, int height, int width) {
  FloatImage img = ResizeWithCropOrPad(in, height, width);
  PerImageStandardization(&img);
  return img;
}

}  // namespace data
}  // namespace pstrain
