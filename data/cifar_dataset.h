// CIFAR-10 in its native binary format ("CIFAR-10 binary version", as TF's
// cifar10 tutorial reads it).
//
// Each file is a sequence of 3073-byte records: one label byte (0..9), then
// the 1024 red, 1024 green and 1024 blue values of a 32x32 image, each plane
// row-major. The loader converts the planes to HWC, so a loaded image is
// rows 32, cols 32, depth 3. Splits:
//   train  data_batch_1.bin .. data_batch_5.bin, in that order
//   test   test_batch.bin
// Stateless functions: thread-safe.
#ifndef PSTRAIN_DATA_CIFAR_DATASET_H_
#define PSTRAIN_DATA_CIFAR_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "data/mnist_dataset.h"

namespace pstrain {
namespace data {

inline constexpr int kCifarSide = 32;
inline constexpr int kCifarDepth = 3;
inline constexpr int kCifarClasses = 10;
inline constexpr int64_t kCifarImageBytes = int64_t{kCifarSide} * kCifarSide * kCifarDepth;
inline constexpr int64_t kCifarRecordBytes = 1 + kCifarImageBytes;  // 3073
// The folder the CIFAR-10 archive unpacks to.
inline constexpr char kCifarFolder[] = "cifar-10-batches-bin";

// The file names of split "train" or "test", in load order; empty for any
// other split.
std::vector<std::string> Cifar10FileNames(const std::string& split);

// The folder that holds split's first file: `data_dir`/cifar-10-batches-bin
// (the folder holding the unpacked archive, as TF's tutorial passes it) or
// `data_dir` itself, tried in that order. NotFound naming both paths if
// neither holds it; InvalidArgument for an unknown split.
StatusOr<std::string> FindCifar10Dir(const std::string& data_dir, const std::string& split);

// Loads split "train" or "test" from the folder FindCifar10Dir finds.
// InvalidArgument for another split; NotFound naming a missing file; the
// errors of ReadCifar10File otherwise.
StatusOr<ImageDataset> LoadCifar10Split(const std::string& data_dir, const std::string& split);

// Reads the records of one file into a 32x32x3 dataset. Errors name the file:
// NotFound if it cannot be opened; DataLoss if it is empty or its size is not
// a whole number of records (naming the short record's index and how many of
// its bytes are there); InvalidArgument naming the record whose label is
// above 9.
StatusOr<ImageDataset> ReadCifar10File(const std::string& path);

// Appends one record: `label` (0..9) then the planes of `hwc`, a 32x32x3
// image in HWC order. The inverse of the reader's conversion.
void AppendCifar10Record(int label, const uint8_t* hwc, std::string* out);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_CIFAR_DATASET_H_
