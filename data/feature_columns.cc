#include "data/feature_columns.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/fingerprint.h"

namespace pstrain {
namespace data {
namespace {

using proto::FeatureColumn;

Status Bad(const FeatureColumn& c, const std::string& problem) {
  return InvalidArgument("feature column " + (c.name().empty() ? "?" : c.name()) + ": " + problem);
}

// A numeric value as text: an integer as its decimal digits.
std::string DecimalText(float x) {
  if (x == std::floor(x) && std::fabs(x) < 1e15) {
    return std::to_string(static_cast<int64_t>(x));
  }
  return std::to_string(x);
}

// An identity column's id for one value, written as an integer: the value,
// or the column's default_value for one outside [0, num_buckets) (no id for
// -1); InvalidArgument when the value is not an integer, or outside
// without a default.
Status IdentityId(const FeatureColumn& c, const std::string& value, int64_t row,
                  std::vector<int64_t>* ids) {
  const auto& i = c.identity();
  int64_t id = -1;
  const char* end = value.data() + value.size();
  const bool integer =
      !value.empty() && std::from_chars(value.data(), end, id).ptr == end && id >= 0;
  if (integer && id < i.num_buckets()) {
    ids->push_back(id);
  } else if (!i.has_default_value()) {
    return Bad(c, "value " + value + " of row " + std::to_string(row) + " is not an id in [0, " +
                      std::to_string(i.num_buckets()) + ")");
  } else if (i.default_value() >= 0) {
    ids->push_back(i.default_value());
  }
  return OkStatus();
}

}  // namespace

Status ReadVocabularyFiles(proto::ModelSpec* spec, const std::string& data_dir) {
  for (FeatureColumn& c : *spec->mutable_feature_column()) {
    if (!c.has_vocabulary_file()) continue;
    const proto::VocabularyFileColumn file = c.vocabulary_file();
    const std::string& name = file.vocabulary_file();
    const std::string path = name.empty() || name[0] == '/' ? name : data_dir + "/" + name;
    const auto bad = [&](const std::string& problem) {
      return Bad(c, "vocabulary file " + path + ": " + problem);
    };
    if (name.empty() || !std::filesystem::is_regular_file(path)) return bad("no such file");
    std::ifstream in(path);
    if (!in) return bad("cannot be read");
    proto::VocabularyListColumn* list = c.mutable_vocabulary_list();  // clears the file column
    list->set_key(file.key());
    list->set_num_oov_buckets(file.num_oov_buckets());
    if (file.has_default_value()) list->set_default_value(file.default_value());
    std::set<std::string> seen;
    std::string line;
    const int64_t wanted = file.has_vocabulary_size() ? file.vocabulary_size() : -1;
    while (list->vocabulary_size() != wanted && std::getline(in, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (!seen.insert(line).second) {
        return bad("line " + std::to_string(list->vocabulary_size() + 1) + " repeats '" + line +
                   "'");
      }
      list->add_vocabulary(line);
    }
    if (in.bad()) return bad("cannot be read");
    if (list->vocabulary().empty()) return bad("no lines");
    if (wanted >= 0 && list->vocabulary_size() < wanted) {
      return bad(std::to_string(list->vocabulary_size()) + " lines, fewer than vocabulary_size " +
                 std::to_string(wanted));
    }
  }
  return OkStatus();
}

StatusOr<FeatureColumns> FeatureColumns::Create(const std::vector<proto::FeatureColumn>& columns,
                                                const std::vector<TableColumn>& inputs) {
  FeatureColumns fc;
  for (size_t i = 0; i < inputs.size(); ++i) {
    fc.inputs_[inputs[i].name] = {static_cast<int>(i), inputs[i].numeric};
  }
  enum Want { kNumbers, kStrings, kEither };
  const auto input = [&](const FeatureColumn& c, const std::string& key, Want want) -> Status {
    auto it = fc.inputs_.find(key);
    if (it == fc.inputs_.end()) return Bad(c, "no input column '" + key + "'");
    if (want == kNumbers && !it->second.numeric) {
      return Bad(c, "input column " + key + " holds strings, not numbers");
    }
    if (want == kStrings && it->second.numeric) {
      return Bad(c, "input column " + key + " holds numbers, not strings");
    }
    return OkStatus();
  };
  const auto source = [&](const FeatureColumn& c, const std::string& name,
                          bool categorical) -> Status {
    const FeatureColumn* s = fc.Find(name);
    if (s == nullptr) return Bad(c, "no feature column '" + name + "' (define it first)");
    if (categorical != fc.IsCategorical(name)) {
      return Bad(c, "column " + name + (categorical ? " gives no ids" : " is not numeric"));
    }
    return OkStatus();
  };
  for (const FeatureColumn& c : columns) {
    if (c.name().empty()) return Bad(c, "no name");
    if (fc.columns_.count(c.name()) > 0) return Bad(c, "defined twice");
    switch (c.kind_case()) {
      case FeatureColumn::kNumeric:
        PS_RETURN_IF_ERROR(input(c, c.numeric().key(), kNumbers));
        break;
      case FeatureColumn::kBucketized: {
        const FeatureColumn* s = fc.Find(c.bucketized().source());
        if (s == nullptr || !s->has_numeric()) {
          return Bad(c, "source '" + c.bucketized().source() + "' is not a numeric column");
        }
        const auto& b = c.bucketized().boundaries();
        if (b.empty() || !std::is_sorted(b.begin(), b.end()) ||
            std::adjacent_find(b.begin(), b.end()) != b.end()) {
          return Bad(c, "boundaries must be one or more ascending values");
        }
        break;
      }
      case FeatureColumn::kVocabularyFile:
        return Bad(c, "vocabulary file " + c.vocabulary_file().vocabulary_file() +
                          " has not been read (data::ReadVocabularyFiles)");
      case FeatureColumn::kVocabularyList: {
        const auto& v = c.vocabulary_list();
        PS_RETURN_IF_ERROR(input(c, v.key(), kStrings));
        if (v.vocabulary().empty()) return Bad(c, "an empty vocabulary");
        std::set<std::string> seen;
        for (const std::string& word : v.vocabulary()) {
          if (!seen.insert(word).second) return Bad(c, "'" + word + "' is in the vocabulary twice");
        }
        if (v.num_oov_buckets() < 0) return Bad(c, "num_oov_buckets must be >= 0");
        if (v.num_oov_buckets() > 0 && v.has_default_value()) {
          return Bad(c, "default_value and num_oov_buckets exclude each other");
        }
        if (v.has_default_value() &&
            (v.default_value() < -1 || v.default_value() >= v.vocabulary_size())) {
          return Bad(c, "default_value must be -1 or an index of the vocabulary");
        }
        break;
      }
      case FeatureColumn::kHashBucket:
        PS_RETURN_IF_ERROR(input(c, c.hash_bucket().key(), kEither));
        if (c.hash_bucket().hash_bucket_size() < 1) return Bad(c, "hash_bucket_size must be >= 1");
        break;
      case FeatureColumn::kIdentity:
        PS_RETURN_IF_ERROR(input(c, c.identity().key(), kEither));
        if (c.identity().num_buckets() < 1) return Bad(c, "num_buckets must be >= 1");
        if (c.identity().has_default_value() &&
            (c.identity().default_value() < -1 ||
             c.identity().default_value() >= c.identity().num_buckets())) {
          return Bad(c, "default_value must be -1 or an id in [0, num_buckets)");
        }
        break;
      case FeatureColumn::kCrossed:
        if (c.crossed().keys_size() + c.crossed().columns_size() < 2) {
          return Bad(c, "a cross needs two keys or columns or more");
        }
        if (c.crossed().hash_bucket_size() < 1) return Bad(c, "hash_bucket_size must be >= 1");
        for (const std::string& key : c.crossed().keys()) {
          PS_RETURN_IF_ERROR(input(c, key, kStrings));
        }
        for (const std::string& name : c.crossed().columns()) {
          const FeatureColumn* k = fc.Find(name);
          if (k == nullptr) return Bad(c, "no feature column '" + name + "' (define it first)");
          if (!k->has_vocabulary_list() && !k->has_identity() && !k->has_bucketized()) {
            // As TF's crossed_column, which refuses hashed and weighted ones.
            return Bad(c, "column " + name +
                              " cannot be crossed (a vocabulary list, identity or bucketized "
                              "column can)");
          }
        }
        break;
      case FeatureColumn::kEmbedding:
        PS_RETURN_IF_ERROR(source(c, c.embedding().source(), true));
        if (c.embedding().dimension() < 1) return Bad(c, "dimension must be >= 1");
        break;
      case FeatureColumn::kIndicator:
        PS_RETURN_IF_ERROR(source(c, c.indicator().source(), true));
        break;
      case FeatureColumn::kWeighted:
        PS_RETURN_IF_ERROR(source(c, c.weighted().source(), true));
        PS_RETURN_IF_ERROR(input(c, c.weighted().weight_key(), kNumbers));
        break;
      case FeatureColumn::KIND_NOT_SET:
        return Bad(c, "no kind");
    }
    fc.columns_[c.name()] = c;
  }
  return fc;
}

StatusOr<FeatureColumns> FeatureColumns::FromSpec(const proto::ModelSpec& spec) {
  std::vector<TableColumn> inputs;
  if (spec.input().has_examples()) {
    for (const auto& c : spec.input().examples().column())
      inputs.push_back({c.name(), c.numeric()});
  }
  const proto::CsvInputSpec& csv = spec.input().csv();
  for (const auto& c : csv.column()) {
    if (c.name() != csv.label_column()) inputs.push_back({c.name(), c.numeric()});
  }
  return Create({spec.feature_column().begin(), spec.feature_column().end()}, inputs);
}

const proto::FeatureColumn* FeatureColumns::Find(const std::string& name) const {
  auto it = columns_.find(name);
  return it == columns_.end() ? nullptr : &it->second;
}

bool FeatureColumns::IsCategorical(const std::string& name) const {
  const FeatureColumn* c = Find(name);
  return c != nullptr && (c->has_bucketized() || c->has_vocabulary_list() || c->has_hash_bucket() ||
                          c->has_identity() || c->has_crossed() || c->has_weighted());
}

int64_t FeatureColumns::NumBuckets(const std::string& name) const {
  const FeatureColumn* c = Find(name);
  if (c == nullptr) return 0;
  switch (c->kind_case()) {
    case FeatureColumn::kBucketized:
      return c->bucketized().boundaries_size() + 1;
    case FeatureColumn::kVocabularyList:
      return c->vocabulary_list().vocabulary_size() + c->vocabulary_list().num_oov_buckets();
    case FeatureColumn::kHashBucket:
      return c->hash_bucket().hash_bucket_size();
    case FeatureColumn::kIdentity:
      return c->identity().num_buckets();
    case FeatureColumn::kCrossed:
      return c->crossed().hash_bucket_size();
    case FeatureColumn::kWeighted:
      return NumBuckets(c->weighted().source());
    default:
      return 0;
  }
}

int64_t FeatureColumns::DenseWidth(const std::string& name) const {
  const FeatureColumn* c = Find(name);
  if (c == nullptr) return 0;
  if (c->has_numeric()) return 1;
  if (c->has_indicator()) return NumBuckets(c->indicator().source());
  return 0;
}

float FeatureColumns::Number(const std::string& key, const TabularDataset& ds, int64_t row) const {
  return ds.numbers[inputs_.at(key).index][row];
}

std::pair<const std::string*, const std::string*> FeatureColumns::Strings(const std::string& key,
                                                                          const TabularDataset& ds,
                                                                          int64_t row) const {
  return ds.Strings(inputs_.at(key).index, row);
}

Status FeatureColumns::ExampleIds(const FeatureColumn& c, const TabularDataset& ds, int64_t row,
                                  std::vector<int64_t>* ids, std::vector<float>* weights) const {
  switch (c.kind_case()) {
    case FeatureColumn::kBucketized: {
      const auto& b = c.bucketized().boundaries();
      const float x = Number(Find(c.bucketized().source())->numeric().key(), ds, row);
      // TF's Bucketize: the number of boundaries at or below x.
      ids->push_back(std::upper_bound(b.begin(), b.end(), x) - b.begin());
      return OkStatus();
    }
    case FeatureColumn::kVocabularyList: {
      const auto& v = c.vocabulary_list();
      for (auto [s, end] = Strings(v.key(), ds, row); s != end; ++s) {
        auto it = std::find(v.vocabulary().begin(), v.vocabulary().end(), *s);
        if (it != v.vocabulary().end()) {
          ids->push_back(it - v.vocabulary().begin());
        } else if (v.num_oov_buckets() > 0) {
          ids->push_back(v.vocabulary_size() + StringToHashBucketFast(*s, v.num_oov_buckets()));
        } else {
          // TF's lookup gives default_value, -1 unless set; a -1 id crosses
          // (CrossedIds) but is looked up nowhere (Ids drops it).
          ids->push_back(v.has_default_value() ? v.default_value() : -1);
        }
      }
      return OkStatus();
    }
    case FeatureColumn::kHashBucket: {
      const std::string& key = c.hash_bucket().key();
      const int64_t size = c.hash_bucket().hash_bucket_size();
      if (!inputs_.at(key).numeric) {
        for (auto [s, end] = Strings(key, ds, row); s != end; ++s) {
          ids->push_back(StringToHashBucketFast(*s, size));
        }
        return OkStatus();
      }
      // TF hashes an integer column's values as their decimal text.
      const float x = Number(key, ds, row);
      if (x != std::floor(x) || std::fabs(x) > 9e15f) {
        return Bad(c, "value " + DecimalText(x) + " of row " + std::to_string(row) +
                          " is not an integer to hash");
      }
      ids->push_back(Int64ToHashBucketFast(static_cast<int64_t>(x), size));
      return OkStatus();
    }
    case FeatureColumn::kIdentity: {
      const auto& i = c.identity();
      if (inputs_.at(i.key()).numeric) {
        return IdentityId(c, DecimalText(Number(i.key(), ds, row)), row, ids);
      }
      for (auto [s, end] = Strings(i.key(), ds, row); s != end; ++s) {
        PS_RETURN_IF_ERROR(IdentityId(c, *s, row, ids));
      }
      return OkStatus();
    }
    case FeatureColumn::kCrossed:
      return CrossedIds(c, ds, row, ids);
    case FeatureColumn::kWeighted: {
      const size_t before = ids->size();
      PS_RETURN_IF_ERROR(ExampleIds(*Find(c.weighted().source()), ds, row, ids, nullptr));
      if (weights != nullptr) {
        weights->resize(before);  // the source's own weights, if any, are replaced
        weights->insert(weights->end(), ids->size() - before,
                        Number(c.weighted().weight_key(), ds, row));
      }
      return OkStatus();
    }
    default:
      return Bad(c, "gives no ids");
  }
}

Status FeatureColumns::CrossedIds(const FeatureColumn& c, const TabularDataset& ds, int64_t row,
                                  std::vector<int64_t>* ids) const {
  // TF's SparseCross folds its sparse inputs (the ids of feature columns)
  // before its dense ones (the raw strings of input columns).
  std::vector<std::vector<uint64_t>> hashes;
  std::vector<int64_t> column_ids;
  for (const std::string& name : c.crossed().columns()) {
    column_ids.clear();
    PS_RETURN_IF_ERROR(ExampleIds(*Find(name), ds, row, &column_ids, nullptr));
    hashes.emplace_back();
    for (int64_t id : column_ids) hashes.back().push_back(CrossFeatureHash(id));
  }
  for (const std::string& key : c.crossed().keys()) {
    hashes.emplace_back();
    for (auto [s, end] = Strings(key, ds, row); s != end; ++s) {
      hashes.back().push_back(CrossFeatureHash(*s));
    }
  }
  // Every combination of one value of each key, the last key's varying
  // fastest.
  std::vector<size_t> pick(hashes.size(), 0);
  std::vector<uint64_t> combination(hashes.size());
  for (const auto& h : hashes) {
    if (h.empty()) return OkStatus();  // a key without values: no cross
  }
  for (;;) {
    for (size_t k = 0; k < hashes.size(); ++k) combination[k] = hashes[k][pick[k]];
    ids->push_back(
        CrossBucket(combination.data(), combination.size(), c.crossed().hash_bucket_size()));
    size_t k = hashes.size();
    while (k > 0 && ++pick[k - 1] == hashes[k - 1].size()) pick[--k] = 0;
    if (k == 0) return OkStatus();
  }
}

Status FeatureColumns::Ids(const std::string& name, const TabularDataset& ds,
                           const std::vector<int64_t>& rows, RaggedIds* out) const {
  const FeatureColumn* c = Find(name);
  if (name == kLinearBiasFeature || (c != nullptr && c->has_numeric())) {
    // The bias, or a numeric column in a linear model: one row, id 0,
    // weighted by 1 or by the value.
    for (int64_t row : rows) {
      out->values.push_back(0);
      if (c != nullptr) out->weights.push_back(Number(c->numeric().key(), ds, row));
      out->row_splits.push_back(static_cast<int64_t>(out->values.size()));
    }
    return OkStatus();
  }
  if (c == nullptr || !IsCategorical(name)) {
    return InvalidArgument("feature column " + name + " gives no ids");
  }
  const bool weighted = c->has_weighted();
  for (int64_t row : rows) {
    const size_t before = out->values.size();
    PS_RETURN_IF_ERROR(ExampleIds(*c, ds, row, &out->values, weighted ? &out->weights : nullptr));
    // Ids below 0 are left out, as TF's lookups prune them.
    size_t kept = before;
    for (size_t j = before; j < out->values.size(); ++j) {
      if (out->values[j] < 0) continue;
      out->values[kept] = out->values[j];
      if (weighted) out->weights[kept] = out->weights[j];
      ++kept;
    }
    out->values.resize(kept);
    if (weighted) out->weights.resize(kept);
    out->row_splits.push_back(static_cast<int64_t>(out->values.size()));
  }
  return OkStatus();
}

Status FeatureColumns::Dense(const std::string& name, const TabularDataset& ds,
                             const std::vector<int64_t>& rows, float* out, int64_t stride) const {
  const FeatureColumn* c = Find(name);
  if (c == nullptr || DenseWidth(name) == 0) {
    return InvalidArgument("feature column " + name + " is not dense (numeric or indicator)");
  }
  const int64_t width = DenseWidth(name);
  std::vector<int64_t> ids;
  std::vector<float> weights;
  for (size_t i = 0; i < rows.size(); ++i) {
    float* y = out + static_cast<int64_t>(i) * stride;
    if (c->has_numeric()) {
      y[0] = Number(c->numeric().key(), ds, rows[i]);
      continue;
    }
    // An indicator: each id counts once per occurrence, or by its weight.
    std::fill(y, y + width, 0.0f);
    ids.clear();
    weights.clear();
    const FeatureColumn& source = *Find(c->indicator().source());
    PS_RETURN_IF_ERROR(ExampleIds(source, ds, rows[i], &ids, &weights));
    for (size_t j = 0; j < ids.size(); ++j) {
      if (ids[j] >= 0) y[ids[j]] += weights.empty() ? 1.0f : weights[j];
    }
  }
  return OkStatus();
}

}  // namespace data
}  // namespace pstrain
