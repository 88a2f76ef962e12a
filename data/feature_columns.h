// FeatureColumns: TensorFlow's feature columns (proto/feature_columns.proto)
// over the rows of a TabularDataset (data/tabular_dataset.h): what each
// categorical column makes of a batch of rows (ids, as ragged tensors, with
// weights for a weighted column) and what each dense column does (numeric
// values, an indicator's multi-hot vector), with TF's semantics and hashes.
// A string input column may hold several values in a row (a variable-length
// feature): a categorical column gives an id for each, and a crossed column
// crosses every one with every value of its other keys, as TF's do.
//
// Thread safety: const after Create; any thread may transform batches.
#ifndef PSTRAIN_DATA_FEATURE_COLUMNS_H_
#define PSTRAIN_DATA_FEATURE_COLUMNS_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/ragged.h"
#include "core/status.h"
#include "data/tabular_dataset.h"
#include "proto/feature_columns.pb.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace data {

// Every vocabulary_file column of the spec replaced by the vocabulary_list
// of its file's lines (TF's categorical_column_with_vocabulary_file reads
// them as the graph is built), a relative path taken in data_dir.
// InvalidArgument as "feature column NAME: vocabulary file PATH: problem"
// for a file that does not exist or cannot be read, is empty, repeats a
// line, or has fewer
// lines than vocabulary_size.
Status ReadVocabularyFiles(proto::ModelSpec* spec, const std::string& data_dir);

// The feature a linear model's bias reads: id 0, weight 1, in every example.
inline constexpr char kLinearBiasFeature[] = "linear/bias";

class FeatureColumns {
 public:
  // InvalidArgument, as "feature column NAME: problem", for a column
  // without a name or kind, two of one name, a key that is not an input
  // column (or of the wrong type: a numeric column of strings), a source
  // that is not a column of the kind it needs (a bucketized column of a
  // categorical one, an embedding of a numeric one), boundaries that do not
  // ascend, bucket counts < 1, a crossed column of fewer than two keys or
  // of a numeric column, an empty vocabulary. The datasets given to Ids and
  // Dense must hold `inputs` in this order.
  static StatusOr<FeatureColumns> Create(const std::vector<proto::FeatureColumn>& columns,
                                         const std::vector<TableColumn>& inputs);
  // The spec's feature columns over its CSV input's columns (the label's
  // left out), or over its Examples' columns.
  static StatusOr<FeatureColumns> FromSpec(const proto::ModelSpec& spec);

  // Whether `name` is a column giving ids (vocabulary list, hash bucket,
  // identity, crossed, bucketized, weighted), and how many ids it can give.
  bool IsCategorical(const std::string& name) const;
  int64_t NumBuckets(const std::string& name) const;
  // The width of a dense column (numeric: 1; indicator: its source's
  // buckets); 0 for a column that is not dense.
  int64_t DenseWidth(const std::string& name) const;
  const proto::FeatureColumn* Find(const std::string& name) const;

  // Ids (and weights) of categorical column `name` for rows `rows` of ds,
  // one example each, appended to *out; ids below 0 (a value outside a
  // vocabulary list) are left out, as TF's lookups prune them. A numeric
  // column gives id 0 weighted by its value, kLinearBiasFeature id 0: how a
  // linear model weighs them.
  Status Ids(const std::string& name, const TabularDataset& ds, const std::vector<int64_t>& rows,
             RaggedIds* out) const;
  // The values of dense column `name` for `rows`: row i's DenseWidth floats
  // at out + i * stride.
  Status Dense(const std::string& name, const TabularDataset& ds, const std::vector<int64_t>& rows,
               float* out, int64_t stride) const;

 private:
  std::map<std::string, proto::FeatureColumn> columns_;
  struct Input {
    int index = 0;  // among the dataset's columns
    bool numeric = false;
  };
  std::map<std::string, Input> inputs_;
  // One example's ids (and weights) of a categorical column.
  // InvalidArgument for an identity column's value outside its buckets
  // without a default. weights may be null.
  Status ExampleIds(const proto::FeatureColumn& c, const TabularDataset& ds, int64_t row,
                    std::vector<int64_t>* ids, std::vector<float>* weights) const;
  // A crossed column's ids for one row: TF's SparseCrossHashed.
  Status CrossedIds(const proto::FeatureColumn& c, const TabularDataset& ds, int64_t row,
                    std::vector<int64_t>* ids) const;
  float Number(const std::string& key, const TabularDataset& ds, int64_t row) const;
  // Row `row`'s strings of input column `key`: [first, second).
  std::pair<const std::string*, const std::string*> Strings(const std::string& key,
                                                            const TabularDataset& ds,
                                                            int64_t row) const;
};

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_FEATURE_COLUMNS_H_
