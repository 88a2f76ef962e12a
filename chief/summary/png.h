// A minimal PNG encoder for image summaries: 8-bit samples, no interlacing,
// filter type 0 (None) on every row, one zlib-compressed IDAT chunk.
#ifndef PSTRAIN_CHIEF_SUMMARY_PNG_H_
#define PSTRAIN_CHIEF_SUMMARY_PNG_H_

#include <cstdint>
#include <string>

#include "core/status.h"

namespace pstrain {

// Encodes height x width pixels of `channels` interleaved 8-bit samples each,
// row-major (pixels[(y * width + x) * channels + c]), as a PNG file's bytes.
// channels: 1 grayscale, 2 grayscale + alpha, 3 RGB, 4 RGBA.
// InvalidArgument for a non-positive size or another channel count;
// Internal if zlib fails. Thread-safe (no shared state).
StatusOr<std::string> EncodePng(int height, int width, int channels, const uint8_t* pixels);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_SUMMARY_PNG_H_
