// Batches of feature columns: a TabularDataset's rows transformed once by
// FeatureColumns (data/feature_columns.h) into what a model of columns reads
// (each requested categorical column's ids, every dense column's values),
// then gathered into batches: epoch after epoch over a worker's shard for
// training (FeatureBatchSource), in order for evaluation (GatherBatch).
// Transforming every row up front finds a row no column can take before
// training starts.
//
// Thread safety: Featurize and GatherBatch are stateless; a
// FeatureBatchSource serializes Next.
#ifndef PSTRAIN_DATA_FEATURE_BATCHES_H_
#define PSTRAIN_DATA_FEATURE_BATCHES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/ragged.h"
#include "core/status.h"
#include "core/tensor.h"
#include "data/batch_source.h"
#include "data/csv_dataset.h"
#include "data/feature_columns.h"
#include "data/shard_order.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace data {

// What a model reads: categorical (or numeric, or the bias) features by
// name, and dense columns side by side in this order.
struct FeatureRequest {
  std::vector<std::string> sparse;
  std::vector<std::string> dense;
};

// Every row of a dataset, transformed.
// The label of an example whose class the training data did not hold (a
// test line with a label its training file lacks): always a wrong answer.
inline constexpr int32_t kUnseenClass = -1;

struct FeaturizedRows {
  std::map<std::string, RaggedIds> sparse;  // one example per row
  std::vector<float> dense;                 // count x dense_width
  int64_t dense_width = 0;
  std::vector<int32_t> labels;
  int64_t count = 0;
  // Text: lines whose label the training file lacks (their label
  // kUnseenClass, data/text_dataset.h).
  int64_t unseen_labels = 0;
};

// The columns' errors (a value no column can take, naming the column and
// the row), or InvalidArgument for a requested feature that is no column.
StatusOr<FeaturizedRows> Featurize(const TabularDataset& ds, const FeatureColumns& columns,
                                   const FeatureRequest& request);

// Whether the spec's input is rows (CSV, text or Examples of sparse
// features) rather than images.
bool ReadsRows(const proto::ModelSpec& spec);

// The train_file or test_file of the spec's CSV input in data_dir, read
// (data/csv_dataset.h) and transformed by the spec's feature columns; or of
// its text input, read as fastText reads it (data/text_dataset.h, the
// dictionary made from the train_file); or of its Examples
// (data/example_rows.h: sparse features as they are, or columns transformed
// by the feature columns). The readers' errors (naming the
// file, line and column), the columns'; InvalidArgument when the text has
// more labels than the model has classes.
StatusOr<FeaturizedRows> LoadFeaturizedRows(const proto::ModelSpec& spec,
                                            const std::string& data_dir, bool train,
                                            const FeatureRequest& request);

// Rows `rows` of `f` as a batch: sparse ids, dense [n, dense_width] (when
// there are dense columns), labels.
void GatherBatch(const FeaturizedRows& f, const std::vector<int64_t>& rows, Batch* out);

// A worker's shard of the rows, each epoch in the order of
// data/shard_order.h, in batches of batch_size (the last of
// an epoch may be smaller), for `epochs` epochs (0: for ever).
class FeatureBatchSource : public BatchSource {
 public:
  // Borrows f. InvalidArgument for batch_size < 1, a shard outside
  // [0, num_shards) or without rows, epochs < 0.
  static StatusOr<std::unique_ptr<FeatureBatchSource>> Create(const FeaturizedRows* f,
                                                              int batch_size, const Shard& shard,
                                                              uint64_t seed, int64_t epochs);
  bool Next(Batch* out) override;
  int64_t examples_per_epoch() const override { return static_cast<int64_t>(shard_.size()); }

 private:
  FeatureBatchSource(const FeaturizedRows* f, int batch_size, const Shard& shard, uint64_t seed,
                     int64_t epochs);
  const FeaturizedRows* const f_;
  const int batch_size_;
  const int shard_index_;
  const uint64_t seed_;
  const int64_t epochs_;
  const std::vector<int64_t> shard_;
  std::mutex mu_;
  std::vector<int64_t> order_;  // guarded by mu_
  int64_t epoch_ = 0;           // guarded by mu_
  size_t position_ = 0;         // guarded by mu_
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_FEATURE_BATCHES_H_
