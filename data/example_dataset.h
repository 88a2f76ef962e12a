// Image datasets stored as TFRecord files of tf.train.Example, the way
// TensorFlow's convert_to_records.py (the MNIST tutorial's) writes them: one
// Example per image with the features
//   image_raw  bytes_list, one value: the image's height*width*depth uint8s, HWC
//   label      int64_list, one value in 0..9
//   height, width, depth  int64_list, one value each (MNIST: 28, 28, 1)
// The files may be plain or gzip-compressed (TFRecordOptions GZIP); the
// reader tells them apart itself (core/tfrecord.h). Stateless functions:
// thread-safe.
#ifndef PSTRAIN_DATA_EXAMPLE_DATASET_H_
#define PSTRAIN_DATA_EXAMPLE_DATASET_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"
#include "core/tfrecord.h"
#include "data/mnist_dataset.h"

namespace pstrain {
namespace data {

// One image as a serialized tf.train.Example with the features above. Map
// entries are written in key order, so equal images give equal bytes.
std::string SerializeImageExample(const uint8_t* pixels, int height, int width, int depth,
                                  int64_t label);

// Reads every Example of a TFRecord file into a dataset. Errors name the file
// and the record index: NotFound if the file does not exist; DataLoss for a
// truncated record, a CRC mismatch or a corrupt gzip stream; InvalidArgument
// for a record that is not an Example, an Example without image_raw, label,
// height, width or depth (or with one of the wrong kind or count), a label
// outside 0..9, a shape that is not positive, an image_raw whose size is not
// height*width*depth, an image whose shape differs from the first one's, or a
// file with no records.
StatusOr<ImageDataset> ReadExampleFile(const std::string& path);

// Writes every image of `ds` in order as one Example each to `path`, through
// TfRecordWriter (the file appears only once complete). Unavailable on an
// I/O error.
Status WriteExampleFile(const ImageDataset& ds, const std::string& path,
                        TfRecordCompression compression);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_EXAMPLE_DATASET_H_
