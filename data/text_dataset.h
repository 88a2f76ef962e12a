// fastText's text input, by its Dictionary's rules, so that a model of ids
// trains on what fastText's `supervised` trains on:
//   - a line is one example; tokens are separated by whitespace (space,
//     tab, vertical tab, form feed, carriage return, NUL), and each line
//     ends with the token "</s>";
//   - a token starting with "__label__" is a label (the first one is the
//     example's class), any other a word; with `lowercase`, ASCII letters
//     are lowered first (as fastText's tutorials prepare their files);
//   - the words of the training file seen at least min_count times, "</s>"
//     included, are the dictionary, ids 0.. in order of count (most first);
//   - an example's ids are its known words' ids, then, for word_ngrams > 1,
//     one id per word n-gram (n = 2 .. word_ngrams, unknown words included):
//     num_words + hash % buckets, the hash folded from the words' FNV-1a
//     hashes as fastText's addWordNgrams folds them.
// Stateless functions and const methods: thread-safe.
#ifndef PSTRAIN_DATA_TEXT_DATASET_H_
#define PSTRAIN_DATA_TEXT_DATASET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "data/feature_batches.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace data {

// The feature a text model's embedding reads.
inline constexpr char kWordsFeature[] = "words";

struct TextOptions {
  int word_ngrams = 2;        // fastText's -wordNgrams
  int64_t buckets = 2000000;  // -bucket
  int min_count = 1;          // -minCount
  bool lowercase = true;
};

// fastText's hash of a token: 32-bit FNV-1a over its bytes, each taken as
// a signed char (so bytes above 127 hash as fastText hashes them).
uint32_t FastTextHash(std::string_view token);

// A line's tokens, "</s>" last; with lowercase, every token but a label's
// lowered.
std::vector<std::string> Tokenize(std::string_view line, bool lowercase);

// The labels of a training file without the "__label__" prefix, in the
// order a TextDictionary of it holds them; only the labels are counted.
// NotFound for a missing file, InvalidArgument for one without labels.
StatusOr<std::vector<std::string>> TextLabels(const std::string& path);

class TextDictionary {
 public:
  // The words and labels of a training file. NotFound for a missing file;
  // InvalidArgument for options out of range (word_ngrams < 1, buckets < 1,
  // min_count < 1) or a file without labelled lines.
  static StatusOr<TextDictionary> Build(const std::string& path, const TextOptions& options);

  const TextOptions& options() const { return options_; }
  int64_t num_words() const { return static_cast<int64_t>(words_.size()); }
  // Labels without the "__label__" prefix, in order of count (most first):
  // a label's index is its class.
  const std::vector<std::string>& labels() const { return labels_; }
  // The ids of one line's tokens (Tokenize), appended.
  void LineIds(const std::vector<std::string>& tokens, std::vector<int64_t>* ids) const;
  // The class of a token "__label__X", or -1.
  int LabelOf(const std::string& token) const;

 private:
  TextOptions options_;
  std::vector<std::string> words_;
  std::unordered_map<std::string, int64_t> word_ids_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, int> label_ids_;
};

// Every line of a fastText file: its ids as the feature kWordsFeature, its
// first label's class, or kUnseenClass for a label the dictionary does not
// hold (a test line whose label the training file lacks; counted in
// unseen_labels). InvalidArgument as "FILE:LINE: problem" for a line
// without a label; NotFound for a missing file.
StatusOr<FeaturizedRows> ReadFastTextFile(const std::string& path, const TextDictionary& dict);

// A text input's options (data/text_dataset.h) from the spec's.
TextOptions TextOptionsOf(const proto::TextInputSpec& text);
// A model of text with num_classes 0 takes as many classes as its training
// file (in data_dir) has labels, in TextDictionary's order (by count, most
// first; equal counts in the labels' alphabetical order), and its last
// layer, a dense one of 0 units, that many units. Nothing for another
// model; TextDictionary::Build's errors, naming the model.
Status TakeClassesFromText(proto::ModelSpec* spec, const std::string& data_dir);

}  // namespace data
}  // namespace pstrain

#endif  // PSTRAIN_DATA_TEXT_DATASET_H_
