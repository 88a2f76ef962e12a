#include "data/text_dataset.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

// FNV-1a's published test vectors (fastText's hash for ASCII), and a byte
// above 127, which fastText widens as a signed char:
// (2166136261 ^ 0xFFFFFFC3) * 16777619 mod 2^32 for "\xC3".
TEST(FastTextHash, IsFnv1aOverSignedBytes) {
  EXPECT_EQ(FastTextHash(""), 0x811c9dc5u);
  EXPECT_EQ(FastTextHash("a"), 0xe40c292cu);
  EXPECT_EQ(FastTextHash("foobar"), 0xbf9cf968u);
  EXPECT_EQ(FastTextHash("\xC3"), static_cast<uint32_t>((2166136261u ^ 0xFFFFFFC3u) * 16777619u));
}

TEST(Tokenize, SplitsOnWhitespaceLowersWordsAndEndsWithEos) {
  EXPECT_EQ(Tokenize("__label__Net  Fast\tHTTP\vserver\r", /*lowercase=*/true),
            (std::vector<std::string>{"__label__Net", "fast", "http", "server", "</s>"}));
  EXPECT_EQ(Tokenize("A b", /*lowercase=*/false), (std::vector<std::string>{"A", "b", "</s>"}));
  EXPECT_EQ(Tokenize("", true), (std::vector<std::string>{"</s>"}));
}

std::string Write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// A line's ids are its known words', then one per word bigram, folded as
// fastText's addWordNgrams folds them (each hash widened with its sign).
TEST(TextDictionary, GivesWordsByCountThenHashedBigrams) {
  TempDir dir;
  const std::string train = Write(dir, "train.txt",
                                  "__label__net web server web\n"
                                  "__label__games web game\n");
  TextOptions options;
  options.word_ngrams = 2;
  options.buckets = 1000;
  auto dict = TextDictionary::Build(train, options);
  ASSERT_TRUE(dict.ok()) << dict.status().ToString();
  // web 3, </s> 2, game 1, server 1 (ties in key order).
  EXPECT_EQ(dict->num_words(), 4);
  EXPECT_EQ(dict->labels(), (std::vector<std::string>{"games", "net"}));
  std::vector<int64_t> ids;
  dict->LineIds(Tokenize("__label__net Web unknown", true), &ids);
  const auto hash = [](const char* w) {
    return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(FastTextHash(w))));
  };
  const auto bigram = [&](const char* a, const char* b) {
    return 4 + static_cast<int64_t>((hash(a) * 116049371 + hash(b)) % 1000);
  };
  EXPECT_EQ(ids, (std::vector<int64_t>{0, 1, bigram("web", "unknown"), bigram("unknown", "</s>")}));
  EXPECT_EQ(dict->LabelOf("__label__net"), 1);
  EXPECT_EQ(dict->LabelOf("__label__nope"), -1);

  auto rows = ReadFastTextFile(train, *dict);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->count, 2);
  EXPECT_EQ(rows->labels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(rows->sparse.at(kWordsFeature).batch(), 2);
}

TEST(TextDictionary, ALineWithoutALabelIsRefusedNamingTheFileAndLine) {
  TempDir dir;
  const std::string train = Write(dir, "train.txt", "__label__net web\n");
  auto dict = TextDictionary::Build(train, TextOptions());
  PS_ASSERT_OK(dict);
  const std::string unlabelled = Write(dir, "a.txt", "__label__net web\nno label here\n");
  EXPECT_NE(
      ReadFastTextFile(unlabelled, *dict).status().message().find(unlabelled + ":2: no __label__"),
      std::string::npos);
  TextOptions bad;
  bad.buckets = 0;
  EXPECT_EQ(TextDictionary::Build(train, bad).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(TextDictionary::Build(dir.path() + "/none", TextOptions()).status().code(),
            Code::kNotFound);
}

// A test line whose label the training file lacks is read, its class
// kUnseenClass, and counted: the evaluation takes it as a wrong answer.
TEST(TextDictionary, ALabelUnseenInTrainingIsReadAndCounted) {
  TempDir dir;
  const std::string train = Write(dir, "train.txt", "__label__net web\n__label__sound mp3\n");
  auto dict = TextDictionary::Build(train, TextOptions());
  PS_ASSERT_OK(dict);
  const std::string test =
      Write(dir, "test.txt", "__label__games web\n__label__net web\n__label__tasks x\n");
  auto rows = ReadFastTextFile(test, *dict);
  PS_ASSERT_OK(rows);
  EXPECT_EQ(rows->count, 3);
  EXPECT_EQ(rows->unseen_labels, 2);
  EXPECT_EQ(rows->labels,
            (std::vector<int32_t>{kUnseenClass, dict->LabelOf("__label__net"), kUnseenClass}));
}

// A model of text without num_classes takes as many as its training file
// has labels, in the dictionary's order, and so does its last dense layer.
TEST(TextDictionary, AModelTakesItsClassesFromItsTrainingFile) {
  TempDir dir;
  Write(dir, "train.txt", "__label__b x\n__label__a y\n__label__c z\n__label__c w\n");
  proto::ModelSpec spec;
  spec.set_name("text");
  spec.mutable_input()->mutable_text()->set_train_file("train.txt");
  spec.add_layer()->mutable_embedding_bag()->set_feature("words");
  spec.add_layer()->mutable_dense();
  PS_ASSERT_OK(TakeClassesFromText(&spec, dir.path()));
  EXPECT_EQ(spec.num_classes(), 3);
  EXPECT_EQ(spec.layer(1).dense().units(), 3);
  auto dict = TextDictionary::Build(dir.path() + "/train.txt", TextOptions());
  PS_ASSERT_OK(dict);
  EXPECT_EQ(dict->labels(), (std::vector<std::string>{"c", "a", "b"}));  // by count, then name
  auto labels = TextLabels(dir.path() + "/train.txt");
  PS_ASSERT_OK(labels);
  EXPECT_EQ(*labels, dict->labels()) << "the classes are the dictionary's, in its order";
  proto::ModelSpec missing = spec;
  missing.set_num_classes(0);
  PS_EXPECT_CODE(TakeClassesFromText(&missing, dir.path() + "/nowhere"), Code::kNotFound);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
