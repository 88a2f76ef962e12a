#include "data/text_dataset.h"

#include <algorithm>
#include <fstream>

namespace pstrain {
namespace data {
namespace {

constexpr std::string_view kLabelPrefix = "__label__";
constexpr char kEndOfSentence[] = "</s>";

bool IsSeparator(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\f' || c == '\0';
}

// The keys counted at least min_count times, most counted first; equal
// counts in the keys' order, for stable ids.
std::vector<std::string> ByCount(const std::unordered_map<std::string, int64_t>& counts,
                                 int64_t min_count) {
  std::vector<std::pair<std::string, int64_t>> kept;
  for (const auto& [key, count] : counts) {
    if (count >= min_count) kept.emplace_back(key, count);
  }
  // Most first; equal counts in the keys' order (the map's own is none).
  std::sort(kept.begin(), kept.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> keys;
  for (auto& [key, count] : kept) keys.push_back(std::move(key));
  return keys;
}

bool IsLabel(const std::string& token) {
  return token.compare(0, kLabelPrefix.size(), kLabelPrefix) == 0;
}

}  // namespace

uint32_t FastTextHash(std::string_view token) {
  uint32_t h = 2166136261u;
  for (char c : token) {
    // fastText widens each byte as a signed char.
    h ^= static_cast<uint32_t>(static_cast<int32_t>(static_cast<signed char>(c)));
    h *= 16777619u;
  }
  return h;
}

std::vector<std::string> Tokenize(std::string_view line, bool lowercase) {
  std::vector<std::string> tokens;
  std::string token;
  const auto take = [&] {
    if (token.empty()) return;
    // A label keeps its case: only words are lowered.
    if (lowercase && !IsLabel(token)) {
      for (char& c : token) {
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      }
    }
    tokens.push_back(std::move(token));
    token.clear();
  };
  for (char c : line) {
    if (IsSeparator(c)) {
      take();
    } else {
      token.push_back(c);
    }
  }
  take();
  tokens.push_back(kEndOfSentence);
  return tokens;
}

StatusOr<std::vector<std::string>> TextLabels(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open " + path);
  std::unordered_map<std::string, int64_t> label_counts;
  std::string line;
  while (std::getline(in, line)) {
    // A label is never lowered: the line's tokens as they are.
    for (const std::string& token : Tokenize(line, /*lowercase=*/false)) {
      if (IsLabel(token)) ++label_counts[token.substr(kLabelPrefix.size())];
    }
  }
  if (label_counts.empty()) return InvalidArgument(path + " holds no __label__");
  return ByCount(label_counts, 1);
}

StatusOr<TextDictionary> TextDictionary::Build(const std::string& path,
                                               const TextOptions& options) {
  if (options.word_ngrams < 1 || options.buckets < 1 || options.min_count < 1) {
    return InvalidArgument("text input: word_ngrams, buckets and min_count must be >= 1");
  }
  std::ifstream in(path);
  if (!in) return NotFound("cannot open " + path);
  std::unordered_map<std::string, int64_t> word_counts, label_counts;
  std::string line;
  while (std::getline(in, line)) {
    for (const std::string& token : Tokenize(line, options.lowercase)) {
      if (IsLabel(token)) {
        ++label_counts[token.substr(kLabelPrefix.size())];
      } else {
        ++word_counts[token];
      }
    }
  }
  if (label_counts.empty()) return InvalidArgument(path + " holds no __label__");
  TextDictionary d;
  d.options_ = options;
  d.words_ = ByCount(word_counts, options.min_count);
  for (size_t i = 0; i < d.words_.size(); ++i) d.word_ids_[d.words_[i]] = static_cast<int64_t>(i);
  d.labels_ = ByCount(label_counts, 1);
  for (size_t i = 0; i < d.labels_.size(); ++i) d.label_ids_[d.labels_[i]] = static_cast<int>(i);
  return d;
}

int TextDictionary::LabelOf(const std::string& token) const {
  if (!IsLabel(token)) return -1;
  auto it = label_ids_.find(token.substr(kLabelPrefix.size()));
  return it == label_ids_.end() ? -1 : it->second;
}

void TextDictionary::LineIds(const std::vector<std::string>& tokens,
                             std::vector<int64_t>* ids) const {
  // fastText keeps each word's hash as an int32 and widens it with its sign
  // when it folds n-grams in 64 bits.
  std::vector<int32_t> hashes;
  for (const std::string& token : tokens) {
    if (IsLabel(token)) continue;
    auto it = word_ids_.find(token);
    if (it != word_ids_.end()) ids->push_back(it->second);
    hashes.push_back(static_cast<int32_t>(FastTextHash(token)));
  }
  const auto n = static_cast<size_t>(options_.word_ngrams);
  for (size_t i = 0; i < hashes.size(); ++i) {
    uint64_t h = static_cast<uint64_t>(static_cast<int64_t>(hashes[i]));
    for (size_t j = i + 1; j < hashes.size() && j < i + n; ++j) {
      h = h * 116049371 + static_cast<uint64_t>(static_cast<int64_t>(hashes[j]));
      ids->push_back(num_words() +
                     static_cast<int64_t>(h % static_cast<uint64_t>(options_.buckets)));
    }
  }
}

StatusOr<FeaturizedRows> ReadFastTextFile(const std::string& path, const TextDictionary& dict) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open " + path);
  FeaturizedRows rows;
  RaggedIds& ids = rows.sparse[kWordsFeature];
  std::string line;
  for (int64_t line_number = 1; std::getline(in, line); ++line_number) {
    const std::vector<std::string> tokens = Tokenize(line, dict.options().lowercase);
    int label = -1;
    std::string first_label;
    for (const std::string& token : tokens) {
      if (IsLabel(token)) {
        first_label = token;
        label = dict.LabelOf(token);
        break;
      }
    }
    const std::string at = path + ":" + std::to_string(line_number) + ": ";
    if (first_label.empty()) return InvalidArgument(at + "no __label__");
    if (label < 0) {
      label = kUnseenClass;
      ++rows.unseen_labels;
    }
    dict.LineIds(tokens, &ids.values);
    ids.row_splits.push_back(static_cast<int64_t>(ids.values.size()));
    rows.labels.push_back(label);
    ++rows.count;
  }
  if (rows.count == 0) return InvalidArgument(path + " holds no lines");
  return rows;
}

TextOptions TextOptionsOf(const proto::TextInputSpec& text) {
  TextOptions options;
  if (text.word_ngrams() > 0) options.word_ngrams = text.word_ngrams();
  if (text.buckets() > 0) options.buckets = text.buckets();
  if (text.min_count() > 0) options.min_count = text.min_count();
  options.lowercase = !text.keep_case();
  return options;
}

Status TakeClassesFromText(proto::ModelSpec* spec, const std::string& data_dir) {
  if (!spec->input().has_text() || spec->num_classes() > 0) return OkStatus();
  const proto::TextInputSpec& text = spec->input().text();
  auto labels = TextLabels(data_dir + "/" + text.train_file());
  if (!labels.ok()) {
    return labels.status().Annotate("model " + spec->name() +
                                    " takes its classes from its training file");
  }
  const auto classes = static_cast<int32_t>(labels->size());
  spec->set_num_classes(classes);
  if (spec->layer_size() > 0 && spec->layer(spec->layer_size() - 1).has_dense() &&
      spec->layer(spec->layer_size() - 1).dense().units() == 0) {
    spec->mutable_layer(spec->layer_size() - 1)->mutable_dense()->set_units(classes);
  }
  return OkStatus();
}

}  // namespace data
}  // namespace pstrain
