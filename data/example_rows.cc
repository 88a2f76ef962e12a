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

}  // namespace

StatusOr<FeaturizedRows> ReadExampleRows(const std::string& path,
                                         const proto::ExampleInputSpec& spec, int num_classes) {
  PS_ASSIGN_OR_RETURN(std::unique_ptr<TfRecordReader> reader, TfRecordReader::Open(path));
  FeaturizedRows rows;
  for (const auto& f : spec.feature()) rows.sparse[f.name()];
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
    const tensorflow::Feature& label = FeatureOf(example, spec.label_key());
    if (label.int64_list().value_size() != 1 || label.int64_list().value(0) < 0 ||
        label.int64_list().value(0) >= num_classes) {
      return InvalidArgument(at + "feature " + spec.label_key() +
                             ": the label must be one int64 in [0, " + std::to_string(num_classes) +
                             ")");
    }
    rows.labels.push_back(static_cast<int32_t>(label.int64_list().value(0)));
    for (const auto& f : spec.feature()) {
      PS_RETURN_IF_ERROR(AppendFeature(example, f, &rows.sparse[f.name()]).Annotate(where));
    }
    ++rows.count;
  }
  if (rows.count == 0) return InvalidArgument(path + " holds no records");
  return rows;
}

}  // namespace data
}  // namespace pstrain
