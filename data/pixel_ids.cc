#include "data/pixel_ids.h"

namespace pstrain {
namespace data {

int64_t PixelIdVocabulary(const ImageDataset& ds) { return ds.image_size() * kPixelLevels; }

void AppendPixelIds(const ImageDataset& ds, int64_t index, RaggedIds* out) {
  const int64_t size = ds.image_size();
  const uint8_t* pixels = ds.pixels.data() + index * size;
  for (int64_t i = 0; i < size; ++i) {
    const int p = pixels[i];
    if (p == 0) continue;
    out->values.push_back(i * kPixelLevels + p * kPixelLevels / 256);
    out->weights.push_back(static_cast<float>(p) / 255.0f);
  }
  out->row_splits.push_back(static_cast<int64_t>(out->values.size()));
}

Status PrepareEvalPixelIds(const ImageDataset& ds, int64_t begin, int64_t count,
                           std::map<std::string, RaggedIds>* out) {
  if (begin < 0 || count < 0 || begin > ds.count || count > ds.count - begin) {
    return InvalidArgument("images [" + std::to_string(begin) + ", " +
                           std::to_string(begin + count) + ") are not within the dataset's " +
                           std::to_string(ds.count));
  }
  RaggedIds ids;
  for (int64_t i = begin; i < begin + count; ++i) AppendPixelIds(ds, i, &ids);
  out->clear();
  (*out)[kPixelIdsFeature] = std::move(ids);
  return OkStatus();
}

}  // namespace data
}  // namespace pstrain
