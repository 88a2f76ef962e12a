// Per-image input transformations of TensorFlow's cifar10 tutorial
// (cifar10_input.py), each with TensorFlow's definition, on float HWC images.
//
// Training:   random crop -> random left-right flip -> random brightness ->
//             random contrast -> per-image standardization.
// Evaluation: central crop (tf.image.resize_image_with_crop_or_pad) ->
//             per-image standardization.
// Each transformation takes its random draw as a parameter, so it is a pure
// function; DrawDistortion makes the draws from a seeded std::mt19937_64 in
// TF's ranges with arithmetic of its own (not <random>'s distributions), so
// a seed gives the same draws with every standard library.
//
// Images are pixel values cast to float, 0..255 for uint8 data (tf.cast), as
// the tutorial distorts them; no transformation clips. Sizes that do not fit
// the image are programmer errors (CHECKed): validate configuration with
// CheckDistortionParams first. Stateless functions: thread-safe.
#ifndef PSTRAIN_DATA_DISTORTIONS_H_
#define PSTRAIN_DATA_DISTORTIONS_H_

#include <cstdint>
#include <random>
#include <vector>

#include "core/status.h"
#include "data/mnist_dataset.h"

namespace pstrain {
namespace data {

struct FloatImage {
  int height = 0, width = 0, depth = 0;
  std::vector<float> values;  // height * width * depth, HWC

  float& at(int y, int x, int c) { return values[(int64_t{y} * width + x) * depth + c]; }
  float at(int y, int x, int c) const { return values[(int64_t{y} * width + x) * depth + c]; }
};

// Image `index` of `ds` as floats equal to its pixel values (0..255).
FloatImage ToFloatImage(const ImageDataset& ds, int64_t index);

// The height x width window whose top-left pixel is (top, left)
// (tf.image.crop_to_bounding_box; tf.random_crop with a drawn offset).
FloatImage Crop(const FloatImage& in, int top, int left, int height, int width);

// Mirrors each row (tf.image.flip_left_right).
void FlipLeftRight(FloatImage* img);

// Adds `delta` to every value (tf.image.adjust_brightness on floats).
void AdjustBrightness(float delta, FloatImage* img);

// Per channel: x -> (x - mean) * factor + mean, mean over that channel's
// height * width values (tf.image.adjust_contrast).
void AdjustContrast(float factor, FloatImage* img);

// x -> (x - mean) / max(stddev, 1 / sqrt(N)), mean and (population) stddev
// over all N = height * width * depth values
// (tf.image.per_image_standardization).
void PerImageStandardization(FloatImage* img);

// tf.image.resize_image_with_crop_or_pad: crops a dimension larger than the
// target centrally (offset (size - target) / 2, rounded down) and pads a
// smaller one with zeros on both sides (offset (target - size) / 2 before).
FloatImage ResizeWithCropOrPad(const FloatImage& in, int height, int width);

// The tutorial's ranges.
struct DistortionParams {
  int crop_height = 24, crop_width = 24;
  float max_brightness_delta = 63;  // delta uniform in [-max, max)
  float contrast_lower = 0.2f;      // factor uniform in [lower, upper)
  float contrast_upper = 1.8f;
};

// InvalidArgument unless the crop is positive and fits a height x width
// image, max_brightness_delta >= 0 and 0 <= contrast_lower <= contrast_upper.
Status CheckDistortionParams(const DistortionParams& params, int height, int width);

// One image's random choices.
struct DistortionDraw {
  int crop_top = 0, crop_left = 0;  // uniform over the offsets that fit
  bool flip = false;                // probability 1/2
  float brightness_delta = 0;
  float contrast_factor = 1;
};

// Draws the choices for one height x width image (params must pass
// CheckDistortionParams).
DistortionDraw DrawDistortion(const DistortionParams& params, int height, int width,
                              std::mt19937_64* rng);

// The training path: crop, flip, brightness, contrast, standardization.
FloatImage DistortForTraining(const FloatImage& in, const DistortionParams& params,
                              const DistortionDraw& draw);

// DistortForTraining(ToFloatImage(ds, index), params, draw), written as
// crop_height * crop_width * depth floats at `dst`: the same arithmetic in the
// same order (bit-identical values under the project's compiler flags), with
// crop, flip and brightness fused into one pass from the pixels and no
// allocation (the input pipeline's per-image path).
// `index` must lie within the dataset and the draw fit the image (CHECKed).
void DistortForTrainingInto(const ImageDataset& ds, int64_t index, const DistortionParams& params,
                            const DistortionDraw& draw, float* dst);

// The evaluation path: ResizeWithCropOrPad to height x width, then
// standardization.
FloatImage PrepareForEvaluation(const FloatImage& in, int height, int width);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_DISTORTIONS_H_
