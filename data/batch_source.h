// BatchSource: what the training loop reads its batches from.
//
// A source delivers batches of examples, epoch after epoch, until its last
// epoch is done. InputPipeline (data/input_pipeline.h: preprocessing, and
// either a plain per-epoch shuffle of an in-memory shard or TensorFlow's
// shuffle buffer) implements it.
//
// Thread safety: implementations say; ours lets any thread call Next (calls
// are serialized) and examples_per_epoch.
#ifndef PSTRAIN_DATA_BATCH_SOURCE_H_
#define PSTRAIN_DATA_BATCH_SOURCE_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ragged.h"
#include "core/tensor.h"

namespace pstrain {
namespace data {

struct Batch {
  Tensor images;  // [n, height, width, depth], preprocessed
  // A model of ids' input instead of images: each sparse feature's ids, by
  // the feature's name (PIXEL_IDS: "pixel_ids"; data/pixel_ids.h).
  std::map<std::string, RaggedIds> sparse;
  // A model of columns' dense columns, [n, width] (data/feature_batches.h).
  Tensor dense;
  std::vector<int32_t> labels;  // n
  // 0-based. A source whose batches may span epochs (a shuffle buffer) gives
  // the latest epoch any of the batch's examples came from; that can then
  // step back by one from a batch to the next while the buffer holds two
  // epochs.
  int64_t epoch = 0;
};

class BatchSource {
 public:
  virtual ~BatchSource();

  // Blocks until a batch is ready and moves it into `out`. Returns false once
  // the last epoch's last batch has been taken (never, for a source that runs
  // for ever), and on every call after that.
  virtual bool Next(Batch* out) = 0;

  // Number of examples in one epoch of this source (this worker's shard).
  virtual int64_t examples_per_epoch() const = 0;
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_BATCH_SOURCE_H_
