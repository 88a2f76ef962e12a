#include "data/feature_batches.h"

#include <algorithm>

#include "data/example_rows.h"
#include "data/shard_order.h"
#include "data/text_dataset.h"

namespace pstrain {
namespace data {

StatusOr<FeaturizedRows> Featurize(const TabularDataset& ds, const FeatureColumns& columns,
                                   const FeatureRequest& request) {
  FeaturizedRows f;
  f.count = ds.count;
  f.labels = ds.labels;
  std::vector<int64_t> all(static_cast<size_t>(ds.count));
  for (int64_t i = 0; i < ds.count; ++i) all[i] = i;
  for (const std::string& name : request.sparse) {
    RaggedIds& ids = f.sparse[name];
    PS_RETURN_IF_ERROR(columns.Ids(name, ds, all, &ids));
  }
  for (const std::string& name : request.dense) {
    if (columns.DenseWidth(name) == 0) {
      return InvalidArgument("feature column " + name + " is not dense (numeric or indicator)");
    }
    f.dense_width += columns.DenseWidth(name);
  }
  f.dense.resize(static_cast<size_t>(ds.count * f.dense_width));
  int64_t column = 0;
  for (const std::string& name : request.dense) {
    PS_RETURN_IF_ERROR(columns.Dense(name, ds, all, f.dense.data() + column, f.dense_width));
    column += columns.DenseWidth(name);
  }
  return f;
}

bool ReadsRows(const proto::ModelSpec& spec) {
  return spec.input().has_csv() || spec.input().has_text() || spec.input().has_examples();
}

StatusOr<FeaturizedRows> LoadFeaturizedRows(const proto::ModelSpec& spec,
                                            const std::string& data_dir, bool train,
                                            const FeatureRequest& request) {
  if (spec.input().has_examples()) {
    const proto::ExampleInputSpec& examples = spec.input().examples();
    const std::string path =
        data_dir + "/" + (train ? examples.train_file() : examples.test_file());
    if (examples.column().empty()) return ReadExampleRows(path, examples, spec.num_classes());
    PS_ASSIGN_OR_RETURN(TabularDataset ds, ReadExampleTable(path, examples, spec.num_classes()));
    PS_ASSIGN_OR_RETURN(FeatureColumns columns, FeatureColumns::FromSpec(spec));
    return Featurize(ds, columns, request);
  }
  if (spec.input().has_text()) {
    const proto::TextInputSpec& text = spec.input().text();
    PS_ASSIGN_OR_RETURN(
        TextDictionary dict,
        TextDictionary::Build(data_dir + "/" + text.train_file(), TextOptionsOf(text)));
    if (static_cast<int64_t>(dict.labels().size()) > spec.num_classes()) {
      return InvalidArgument(data_dir + "/" + text.train_file() + " holds " +
                             std::to_string(dict.labels().size()) + " labels, the model " +
                             std::to_string(spec.num_classes()) + " classes");
    }
    return ReadFastTextFile(data_dir + "/" + (train ? text.train_file() : text.test_file()), dict);
  }
  const proto::CsvInputSpec& csv = spec.input().csv();
  const std::string& file = train ? csv.train_file() : csv.test_file();
  if (file.empty()) {
    return InvalidArgument(std::string("the model's CSV input names no ") +
                           (train ? "train_file" : "test_file"));
  }
  PS_ASSIGN_OR_RETURN(TabularDataset ds, ReadCsvFile(data_dir + "/" + file, CsvOptionsOf(csv)));
  PS_ASSIGN_OR_RETURN(FeatureColumns columns, FeatureColumns::FromSpec(spec));
  return Featurize(ds, columns, request);
}

void GatherBatch(const FeaturizedRows& f, const std::vector<int64_t>& rows, Batch* out) {
  const int64_t n = static_cast<int64_t>(rows.size());
  // The vectors of the batch before keep their capacity: the ids of a batch
  // of long texts are copied once, not again at each growth.
  if (out->sparse.size() != f.sparse.size()) out->sparse.clear();
  for (const auto& [name, all] : f.sparse) {
    RaggedIds& ids = out->sparse[name];
    ids.values.clear();
    ids.weights.clear();
    ids.row_splits.assign(1, 0);
    int64_t total = 0;
    for (int64_t row : rows) total += all.row_splits[row + 1] - all.row_splits[row];
    ids.values.reserve(total);
    if (!all.weights.empty()) ids.weights.reserve(total);
    ids.row_splits.reserve(n + 1);
    for (int64_t row : rows) {
      const int64_t begin = all.row_splits[row], end = all.row_splits[row + 1];
      ids.values.insert(ids.values.end(), all.values.begin() + begin, all.values.begin() + end);
      if (!all.weights.empty()) {
        ids.weights.insert(ids.weights.end(), all.weights.begin() + begin,
                           all.weights.begin() + end);
      }
      ids.row_splits.push_back(static_cast<int64_t>(ids.values.size()));
    }
  }
  out->images = Tensor();
  out->dense = f.dense_width > 0 ? Tensor({n, f.dense_width}, Tensor::kUninitialized) : Tensor();
  out->labels.clear();
  for (int64_t i = 0; i < n; ++i) {
    if (f.dense_width > 0) {
      std::copy_n(f.dense.begin() + rows[i] * f.dense_width, f.dense_width,
                  out->dense.data() + i * f.dense_width);
    }
    out->labels.push_back(f.labels[rows[i]]);
  }
}

StatusOr<std::unique_ptr<FeatureBatchSource>> FeatureBatchSource::Create(
    const FeaturizedRows* f, int batch_size, const Shard& shard, uint64_t seed, int64_t epochs) {
  if (batch_size < 1) return InvalidArgument("batch_size must be >= 1");
  PS_RETURN_IF_ERROR(CheckShard(shard));
  if (f->count <= shard.index) {
    return InvalidArgument(shard.ToString() + " has no rows: the data have " +
                           std::to_string(f->count));
  }
  if (epochs < 0) return InvalidArgument("epochs must be >= 0 (0: for ever)");
  return std::unique_ptr<FeatureBatchSource>(
      new FeatureBatchSource(f, batch_size, shard, seed, epochs));
}

FeatureBatchSource::FeatureBatchSource(const FeaturizedRows* f, int batch_size, const Shard& shard,
                                       uint64_t seed, int64_t epochs)
    : f_(f),
      batch_size_(batch_size),
      shard_index_(shard.index),
      seed_(seed),
      epochs_(epochs),
      shard_(ShardIndices(f->count, shard)) {
  order_ = EpochOrder(shard_, seed_, shard_index_, 0);
}

bool FeatureBatchSource::Next(Batch* out) {
  std::vector<int64_t> rows;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (position_ == order_.size()) {
      if (epochs_ != 0 && epoch_ + 1 >= epochs_) return false;
      ++epoch_;
      order_ = EpochOrder(shard_, seed_, shard_index_, epoch_);
      position_ = 0;
    }
    const size_t end = std::min(order_.size(), position_ + static_cast<size_t>(batch_size_));
    rows.assign(order_.begin() + position_, order_.begin() + end);
    position_ = end;
    out->epoch = epoch_;
  }
  GatherBatch(*f_, rows, out);
  return true;
}

}  // namespace data
}  // namespace pstrain
