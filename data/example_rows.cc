#include "data/example_rows.h"

#include "core/fingerprint.h"
#include "core/tfrecord.h"
#include "proto/example.pb.h"

namespace pstrain {
namespace data {
namespace {

// An empty feature for one an example lacks (a VarLenFeature's zero values).
const tensorflow::Feature& FeatureOf(const tensorflow::Example& example, const std::string& key) {
  static const auto* none = new tensorflow::Feature();
  const auto& features = example.features().feature();
  auto it = features.find(key);
  return it == features.end() ? *none : it->second;
}

// One example's values of `f` into *ids (and weights).
Status AppendFeature(const tensorflow::Example& example,
                     const proto::ExampleInputSpec::SparseFeature& f, RaggedIds* ids) {
  const tensorflow::Feature& feature = FeatureOf(example, f.name());
  const size_t before = ids->values.size();
  if (feature.has_bytes_list()) {
    if (f.hash_buckets() < 1) {
      return InvalidArgument("feature " + f.name() + ": bytes values need hash_buckets");
    }
    for (const std::string& value : feature.bytes_list().value()) {
      ids->values.push_back(StringToHashBucketFast(value, f.hash_buckets()));
    }
  } else if (feature.has_int64_list()) {
    if (f.hash_buckets() > 0) {
      return InvalidArgument("feature " + f.name() + ": int64 values are ids, not hashed");
    }
    ids->values.insert(ids->values.end(), feature.int64_list().value().begin(),
                       feature.int64_list().value().end());
  } else if (feature.has_float_list()) {
    return InvalidArgument("feature " + f.name() + ": float values are not ids");
  }
  const size_t count = ids->values.size() - before;
  if (!f.weight_key().empty()) {
    const tensorflow::Feature& weights = FeatureOf(example, f.weight_key());
    if (static_cast<size_t>(weights.float_list().value_size()) != count) {
      return InvalidArgument("feature " + f.name() + ": " + std::to_string(count) + " values, " +
                             std::to_string(weights.float_list().value_size()) +
                             " float weights in " + f.weight_key());
    }
    ids->weights.insert(ids->weights.end(), weights.float_list().value().begin(),
                        weights.float_list().value().end());
  }
  ids->row_splits.push_back(static_cast<int64_t>(ids->values.size()));
  return OkStatus();
}

// One example's value of numeric column `key`.
Status AppendNumber(const tensorflow::Example& example, const std::string& key,
                    std::vector<float>* numbers) {
  const tensorflow::Feature& f = FeatureOf(example, key);
  if (f.float_list().value_size() == 1) {
    numbers->push_back(f.float_list().value(0));
  } else if (f.int64_list().value_size() == 1) {
    numbers->push_back(static_cast<float>(f.int64_list().value(0)));
  } else {
    return InvalidArgument("feature " + key + ": a numeric column needs one float or int64 value");
  }
  return OkStatus();
}

// One example's values of string column `key`, as many as it has.
Status AppendStrings(const tensorflow::Example& example, const std::string& key,
                     std::vector<std::string>* strings) {
  const tensorflow::Feature& f = FeatureOf(example, key);
  if (f.has_float_list()) {
    return InvalidArgument("feature " + key + ": floats, for a column of strings or ids");
  }
  strings->insert(strings->end(), f.bytes_list().value().begin(), f.bytes_list().value().end());
  for (int64_t v : f.int64_list().value()) strings->push_back(std::to_string(v));
  return OkStatus();
}

// Reads every record of `path` as an Example with a label, calling
// row(example, "FILE: record N") for each; InvalidArgument for a file
// without records.
template <typename RowFn>
Status ForEachExample(const std::string& path, const std::string& label_key, int num_classes,
                      std::vector<int32_t>* labels, RowFn row) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TfRecordReader> reader, TfRecordReader::Open(path));
  std::string record;
  tensorflow::Example example;
  for (;;) {
    const int64_t index = reader->record_index();
    Status s = reader->ReadRecord(&record);
    if (s.code() == Code::kOutOfRange) break;
    PS_RETURN_IF_ERROR(s);
    const std::string where = path + ": record " + std::to_string(index);
    const std::string at = where + ": ";
    if (!example.ParseFromString(record)) return InvalidArgument(at + "not a tf.train.Example");
    const tensorflow::Feature& label = FeatureOf(example, label_key);
    if (label.int64_list().value_size() != 1 || label.int64_list().value(0) < 0 ||
        label.int64_list().value(0) >= num_classes) {
      return InvalidArgument(at + "feature " + label_key + ": the label must be one int64 in [0, " +
                             std::to_string(num_classes) + ")");
    }
    labels->push_back(static_cast<int32_t>(label.int64_list().value(0)));
    PS_RETURN_IF_ERROR(row(example, where));
  }
  if (labels->empty()) return InvalidArgument(path + " holds no records");
  return OkStatus();
}

}  // namespace

StatusOr<FeaturizedRows> ReadExampleRows(const std::string& path,
                                         const proto::ExampleInputSpec& spec, int num_classes) {
  FeaturizedRows rows;
  for (const auto& f : spec.feature()) rows.sparse[f.name()];
  PS_RETURN_IF_ERROR(ForEachExample(
      path, spec.label_key(), num_classes, &rows.labels,
      [&](const tensorflow::Example& example, const std::string& where) {
        for (const auto& f : spec.feature()) {
          PS_RETURN_IF_ERROR(AppendFeature(example, f, &rows.sparse[f.name()]).Annotate(where));
        }
        ++rows.count;
        return OkStatus();
      }));
  return rows;
}

StatusOr<TabularDataset> ReadExampleTable(const std::string& path,
                                          const proto::ExampleInputSpec& spec, int num_classes) {
  TabularDataset ds;
  for (const auto& c : spec.column()) ds.columns.push_back({c.name(), c.numeric()});
  const size_t n = ds.columns.size();
  ds.numbers.resize(n);
  ds.strings.resize(n);
  ds.string_splits.resize(n);
  for (size_t c = 0; c < n; ++c) {
    if (!ds.columns[c].numeric) ds.string_splits[c].push_back(0);
  }
  PS_RETURN_IF_ERROR(ForEachExample(
      path, spec.label_key(), num_classes, &ds.labels,
      [&](const tensorflow::Example& example, const std::string& where) {
        for (size_t c = 0; c < n; ++c) {
          const std::string& key = ds.columns[c].name;
          if (ds.columns[c].numeric) {
            PS_RETURN_IF_ERROR(AppendNumber(example, key, &ds.numbers[c]).Annotate(where));
          } else {
            PS_RETURN_IF_ERROR(AppendStrings(example, key, &ds.strings[c]).Annotate(where));
            ds.string_splits[c].push_back(static_cast<int64_t>(ds.strings[c].size()));
          }
        }
        ++ds.count;
        return OkStatus();
      }));
  return ds;
}

}  // namespace data
}  // namespace pstrain
