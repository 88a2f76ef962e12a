// LoadDataset: the one entry point that loads a split of an image dataset,
// whichever of the supported formats its files are in.
//
// Formats and the files of each split in `data_dir`:
//   idx       MNIST IDX (data/mnist_dataset.h): train-images-idx3-ubyte[.gz]
//             and train-labels-idx1-ubyte[.gz]; the test split is t10k-*.
//   cifar     CIFAR-10 binary (data/cifar_dataset.h): data_batch_1..5.bin or
//             test_batch.bin, in data_dir/cifar-10-batches-bin or data_dir.
//   tfrecord  tf.train.Example TFRecords (data/example_dataset.h):
//             train.tfrecords or test.tfrecords, either with .gz (gzip).
//   auto      whichever one of the above has the split's files.
// Stateless functions: thread-safe.
#ifndef PSTRAIN_DATA_DATASET_LOADER_H_
#define PSTRAIN_DATA_DATASET_LOADER_H_

#include <string>

#include "core/status.h"
#include "data/mnist_dataset.h"

namespace pstrain {
namespace data {

// Loads split "train" or "test" of `data_dir` in `format`, keeping the
// examples `keep` names (IDX files are read that way; the other formats
// are read whole, then cut to them: KeepFirst, KeepShard). InvalidArgument
// for an unknown format or split; the errors of DetectDatasetFormat for
// "auto"; NotFound naming a missing file; the format reader's errors (each
// naming the file) otherwise.
StatusOr<ImageDataset> LoadDataset(const std::string& data_dir, const std::string& format,
                                   const std::string& split, const ExampleSubset& keep = {});

// The format ("idx", "cifar" or "tfrecord") whose files for `split` are in
// `data_dir`. NotFound naming every file it looked for when there are none;
// InvalidArgument naming the formats found when there are several (pass the
// format explicitly then) or for an unknown split.
StatusOr<std::string> DetectDatasetFormat(const std::string& data_dir, const std::string& split);

// data_dir/<split>.tfrecords.gz if it exists, else data_dir/<split>.tfrecords;
// NotFound naming both if neither does.
StatusOr<std::string> FindTfRecordFile(const std::string& data_dir, const std::string& split);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_DATASET_LOADER_H_
