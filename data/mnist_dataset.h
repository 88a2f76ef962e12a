// Image datasets in memory, and the MNIST-format ones (MNIST, Fashion-MNIST).
//
// An ImageDataset holds uint8 images of one shape, HWC (rows, cols, depth
// channels), with a label in [0, 10) each: MNIST's (depth 1), CIFAR-10's
// (data/cifar_dataset.h, depth 3) or a TFRecord file's
// (data/example_dataset.h). data/dataset_loader.h picks the reader.
//
// An MNIST split is a pair of IDX files in one directory, gzip-compressed or
// not:
//   <split>-images-idx3-ubyte[.gz]  uint8 [count, rows, cols]
//   <split>-labels-idx1-ubyte[.gz]  uint8 [count], each < 10
// An ImageDataset is immutable once loaded: any thread may read it.
#ifndef PSTRAIN_DATA_MNIST_DATASET_H_
#define PSTRAIN_DATA_MNIST_DATASET_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "data/example_subset.h"
#include "data/shard_order.h"

namespace pstrain {
namespace data {

struct ImageDataset {
  int64_t count = 0;
  int rows = 0, cols = 0;
  int depth = 1;                // channels
  std::vector<uint8_t> pixels;  // count * rows * cols * depth, HWC, row-major
  std::vector<int32_t> labels;  // count, each in [0, 10)
  // Which examples of its split it holds, in order (KeepShard; whole: all).
  Shard shard;

  // rows * cols * depth: the values of one image.
  int64_t image_size() const { return int64_t{rows} * cols * depth; }
};

// Loads split "train" or "t10k" from `data_dir` (depth 1), preferring the .gz
// file when both exist; only the examples `keep` names are read into memory
// (a shard's dataset says which shard it is). NotFound if a file is
// missing; InvalidArgument for another split name or files of the wrong
// rank, counts that disagree or a label >= 10; the errors of ReadIdxFile
// otherwise.
StatusOr<ImageDataset> LoadMnistSplit(const std::string& data_dir, const std::string& split,
                                      const ExampleSubset& keep = {});

// Keeps the first `n` examples (all of them when n <= 0 or n >= count),
// giving back the memory of the rest.
void KeepFirst(int64_t n, ImageDataset* ds);

// Keeps only `shard`, the examples InputPipeline's shard walks
// (data/shard_order.h), giving back the memory of the rest: a worker holds
// its own shard of the split, not the split. A dataset that is already a
// shard is kept as it is.
void KeepShard(const Shard& shard, ImageDataset* ds);

// Writes images [begin, begin + count) into `out` as NHWC floats
// pixel / 255 - 0.5, shaped [count, rows, cols, depth] (reshaped or
// reallocated if it is not). The range must lie within the dataset (CHECKed).
void NormalizeImages(const ImageDataset& ds, int64_t begin, int64_t count, Tensor* out);

// Writes image `index` as image_size() floats pixel / 255 - 0.5 at `dst`.
void NormalizeImage(const ImageDataset& ds, int64_t index, float* dst);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_MNIST_DATASET_H_
