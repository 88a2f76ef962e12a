// The PIXEL_IDS input (proto::InputSpec): an image as sparse ids, a bag of
// its quantized non-zero pixels. Pixel p (0..255) at flat HWC index i
// becomes id i * kPixelLevels + p * kPixelLevels / 256, weighted p / 255;
// zero pixels give nothing. Stateless functions: thread-safe.
#ifndef PSTRAIN_DATA_PIXEL_IDS_H_
#define PSTRAIN_DATA_PIXEL_IDS_H_

#include <cstdint>
#include <map>
#include <string>

#include "core/ragged.h"
#include "core/status.h"
#include "data/mnist_dataset.h"

namespace pstrain {
namespace data {

// The feature's name, as a model's embedding layers read it.
inline constexpr char kPixelIdsFeature[] = "pixel_ids";
inline constexpr int64_t kPixelLevels = 4;

// The ids the images of `ds` can give: image_size() * kPixelLevels.
int64_t PixelIdVocabulary(const ImageDataset& ds);

// Appends image `index` of `ds` as one example of `out`.
void AppendPixelIds(const ImageDataset& ds, int64_t index, RaggedIds* out);

// Images [begin, begin + count) of `ds` as {kPixelIdsFeature: their ids}.
// InvalidArgument for a range outside the dataset.
Status PrepareEvalPixelIds(const ImageDataset& ds, int64_t begin, int64_t count,
                           std::map<std::string, RaggedIds>* out);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_PIXEL_IDS_H_
