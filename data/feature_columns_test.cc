#include "data/feature_columns.h"

#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/tfrecord.h"
#include "data/csv_dataset.h"
#include "data/example_rows.h"
#include "data/test_util.h"
#include "proto/example.pb.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace data {
namespace {

// The rows of tests/tensorflow/feature_columns_golden.py, as a CSV file.
const char kRows[] =
    "25, 11th, Machine-op-inspct, Never-married, 40, <=50K\n"
    "38, HS-grad, Farming-fishing, Married-civ-spouse, 50, <=50K\n"
    "17, Bachelors, ?, Unmarried, 13, >50K\n"
    "65, Doctorate, Prof-specialty, Divorced, 99, >50K\n"
    "30, Masters, Exec-managerial, Married-civ-spouse, 45, <=50K\n";

CsvOptions Options() {
  CsvOptions o;
  o.columns = {{"age", true},
               {"education", false},
               {"occupation", false},
               {"marital_status", false},
               {"hours_per_week", true},
               {"income", false}};
  o.label_column = "income";
  o.label_vocabulary = {"<=50K", ">50K"};
  return o;
}

// The script's columns, in pstrain's spec.
const char kColumns[] = R"(
  feature_column { name: "age" numeric { key: "age" } }
  feature_column { name: "age_buckets" bucketized { source: "age"
                   boundaries: [18, 25, 30, 35, 40, 45, 50, 55, 60, 65] } }
  feature_column { name: "education" vocabulary_list { key: "education"
                   vocabulary: ["Bachelors", "HS-grad", "11th", "Masters", "9th"] } }
  feature_column { name: "marital_status" vocabulary_list { key: "marital_status"
                   vocabulary: ["Married-civ-spouse", "Divorced", "Never-married"]
                   num_oov_buckets: 3 } }
  feature_column { name: "occupation" hash_bucket { key: "occupation" hash_bucket_size: 1000 } }
  feature_column { name: "education_x_occupation" crossed { keys: ["education", "occupation"]
                   hash_bucket_size: 1000 } }
  feature_column { name: "age_buckets_x_education_x_occupation"
                   crossed { columns: ["age_buckets"] keys: ["education", "occupation"]
                   hash_bucket_size: 1000 } }
  feature_column { name: "hours_per_week" identity { key: "hours_per_week" num_buckets: 100 } }
  feature_column { name: "education_indicator" indicator { source: "education" } }
)";

// What TensorFlow 2.21 gives (the script's output): each column's ids per
// row.
const std::map<std::string, std::vector<std::vector<int64_t>>> kTensorFlowIds = {
    {"age_buckets", {{2}, {4}, {0}, {10}, {3}}},
    {"education", {{2}, {1}, {0}, {}, {3}}},
    {"marital_status", {{2}, {0}, {4}, {1}, {0}}},
    {"occupation", {{911}, {936}, {65}, {979}, {800}}},
    {"education_x_occupation", {{555}, {582}, {649}, {568}, {966}}},
    {"age_buckets_x_education_x_occupation", {{135}, {128}, {299}, {0}, {49}}},
    {"hours_per_week", {{40}, {50}, {13}, {99}, {45}}},
};

// The feature_column entries of a ModelSpec in text format.
std::vector<proto::FeatureColumn> Parse(const std::string& text) {
  proto::ModelSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return {spec.feature_column().begin(), spec.feature_column().end()};
}

struct Fixture {
  TempDir dir;
  TabularDataset ds;
  FeatureColumns columns;
};

Fixture Load(const std::string& columns_text) {
  Fixture f;
  const std::string path = f.dir.path() + "/rows.csv";
  std::ofstream(path) << kRows;
  auto ds = ReadCsvFile(path, Options());
  EXPECT_TRUE(ds.ok()) << ds.status().ToString();
  f.ds = std::move(*ds);
  const std::vector<proto::FeatureColumn> list = Parse(columns_text);
  auto created = FeatureColumns::Create(list, f.ds.columns);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  if (created.ok()) f.columns = std::move(*created);
  return f;
}

TEST(FeatureColumns, GiveTheIdsTensorFlowGives) {
  Fixture f = Load(kColumns);
  const std::vector<int64_t> rows = {0, 1, 2, 3, 4};
  for (const auto& [name, want] : kTensorFlowIds) {
    RaggedIds ids;
    ASSERT_TRUE(f.columns.Ids(name, f.ds, rows, &ids).ok()) << name;
    ASSERT_EQ(ids.batch(), 5) << name;
    for (int64_t b = 0; b < 5; ++b) {
      std::vector<int64_t> got(ids.values.begin() + ids.row_splits[b],
                               ids.values.begin() + ids.row_splits[b + 1]);
      EXPECT_EQ(got, want[b]) << name << ", row " << b;
    }
  }
  EXPECT_EQ(f.columns.NumBuckets("age_buckets"), 11);
  EXPECT_EQ(f.columns.NumBuckets("marital_status"), 6);
}

TEST(FeatureColumns, DenseColumnsGiveValuesAndMultiHotVectors) {
  Fixture f = Load(kColumns);
  ASSERT_EQ(f.columns.DenseWidth("age"), 1);
  ASSERT_EQ(f.columns.DenseWidth("education_indicator"), 5);
  std::vector<float> out(3 * 6, -1.0f);
  PS_ASSERT_OK(f.columns.Dense("age", f.ds, {3, 0, 2}, out.data(), 6));
  PS_ASSERT_OK(f.columns.Dense("education_indicator", f.ds, {3, 0, 2}, out.data() + 1, 6));
  EXPECT_EQ(out, (std::vector<float>{65, 0, 0, 0, 0, 0,  // Doctorate: outside the list
                                     25, 0, 0, 1, 0, 0,  // 11th
                                     17, 1, 0, 0, 0, 0}));
}

// The script's rows of variable-length features, as Examples: genres
// (bytes), tags (int64) and one education (bytes) each.
struct VarLenRow {
  std::vector<std::string> genres;
  std::vector<int64_t> tags;
  std::string education;
};
const VarLenRow kVarLenRows[] = {
    {{"Action", "Comedy"}, {3, 7}, "11th"},
    {{}, {}, "HS-grad"},
    {{"Drama", "Film-Noir", "Action"}, {9}, "Bachelors"},
};

const char kVarLenColumns[] = R"(
  feature_column { name: "genres" vocabulary_list { key: "genres"
                   vocabulary: ["Action", "Comedy", "Drama"] num_oov_buckets: 2 } }
  feature_column { name: "genres_hashed" hash_bucket { key: "genres" hash_bucket_size: 100 } }
  feature_column { name: "genres_x_education" crossed { keys: ["genres", "education"]
                   hash_bucket_size: 1000 } }
  feature_column { name: "tags" identity { key: "tags" num_buckets: 10 } }
)";

// What TensorFlow 2.21 gives for them (the script's output, "variable-length"),
// each row's ids in ascending order.
const std::map<std::string, std::vector<std::vector<int64_t>>> kTensorFlowVarLenIds = {
    {"genres", {{0, 1}, {}, {0, 2, 3}}},
    {"genres_hashed", {{39, 40}, {}, {6, 40, 40}}},
    {"genres_x_education", {{71, 214}, {}, {423, 752, 754}}},
    {"tags", {{3, 7}, {}, {9}}},
};

TEST(FeatureColumns, VariableLengthFeaturesGiveTheIdsTensorFlowGives) {
  TempDir dir;
  std::string bytes;
  for (const VarLenRow& r : kVarLenRows) {
    tensorflow::Example e;
    auto& f = *e.mutable_features()->mutable_feature();
    f["genres"].mutable_bytes_list();  // present, maybe without values
    for (const std::string& g : r.genres) f["genres"].mutable_bytes_list()->add_value(g);
    for (int64_t t : r.tags) f["tags"].mutable_int64_list()->add_value(t);
    f["education"].mutable_bytes_list()->add_value(r.education);
    f["label"].mutable_int64_list()->add_value(0);
    AppendTfRecord(e.SerializeAsString(), &bytes);
  }
  const std::string path = dir.path() + "/rows.tfrecords";
  std::ofstream(path, std::ios::binary) << bytes;
  proto::ExampleInputSpec spec;
  spec.set_label_key("label");
  for (const char* key : {"genres", "tags", "education"}) spec.add_column()->set_name(key);
  auto ds = ReadExampleTable(path, spec, 2);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  auto columns = FeatureColumns::Create(Parse(kVarLenColumns), ds->columns);
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  for (const auto& [name, want] : kTensorFlowVarLenIds) {
    RaggedIds ids;
    ASSERT_TRUE(columns->Ids(name, *ds, {0, 1, 2}, &ids).ok()) << name;
    ASSERT_EQ(ids.batch(), 3) << name;
    for (int64_t b = 0; b < 3; ++b) {
      std::vector<int64_t> got(ids.values.begin() + ids.row_splits[b],
                               ids.values.begin() + ids.row_splits[b + 1]);
      std::sort(got.begin(), got.end());
      EXPECT_EQ(got, want[b]) << name << ", row " << b;
    }
  }
}

TEST(FeatureColumns, IdentityOfStringsTakesIntegersOnly) {
  TabularDataset ds;
  ds.columns = {{"tags", false}};
  ds.strings = {{"3", "12", "x7"}};
  ds.string_splits = {{0, 1, 2, 3}};
  ds.count = 3;
  auto columns = FeatureColumns::Create(
      Parse(R"(feature_column { name: "t" identity { key: "tags" num_buckets: 10 } })"),
      ds.columns);
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  RaggedIds ids;
  PS_ASSERT_OK(columns->Ids("t", ds, {0}, &ids));
  EXPECT_EQ(ids.values, (std::vector<int64_t>{3}));
  Status outside = columns->Ids("t", ds, {1}, &ids);
  EXPECT_NE(outside.message().find("value 12 of row 1 is not an id in [0, 10)"), std::string::npos)
      << outside.ToString();
  Status text = columns->Ids("t", ds, {2}, &ids);
  EXPECT_NE(text.message().find("value x7 of row 2"), std::string::npos) << text.ToString();
}

TEST(FeatureColumns, AVocabularyFileGivesTheIdsOfItsList) {
  Fixture f = Load(kColumns);
  // The list of "education" in a file, one more line after it that
  // vocabulary_size leaves out, CRLF line ends.
  std::ofstream(f.dir.path() + "/education.txt", std::ios::binary)
      << "Bachelors\r\nHS-grad\r\n11th\r\nMasters\r\n9th\r\nDoctorate\r\n";
  proto::ModelSpec spec;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(feature_column { name: "education" vocabulary_file { key: "education"
                          vocabulary_file: "education.txt" vocabulary_size: 5 } })",
      &spec));
  PS_ASSERT_OK(ReadVocabularyFiles(&spec, f.dir.path()));
  auto columns = FeatureColumns::Create(
      {spec.feature_column().begin(), spec.feature_column().end()}, f.ds.columns);
  ASSERT_TRUE(columns.ok()) << columns.status().ToString();
  RaggedIds ids;
  PS_ASSERT_OK(columns->Ids("education", f.ds, {0, 1, 2, 3, 4}, &ids));
  EXPECT_EQ(ids.values, (std::vector<int64_t>{2, 1, 0, 3}));  // TF's: Doctorate has none
  EXPECT_EQ(ids.row_splits, (std::vector<int64_t>{0, 1, 2, 3, 3, 4}));
}

TEST(FeatureColumns, AVocabularyFileThatCannotServeIsRefusedNamingIt) {
  TempDir dir;
  std::ofstream(dir.path() + "/twice.txt") << "a\nb\na\n";
  std::ofstream(dir.path() + "/empty.txt");
  const struct {
    std::string column, error;
  } cases[] = {
      {R"(vocabulary_file: "none.txt")",
       "vocabulary file " + dir.path() + "/none.txt: no such file"},
      {R"(vocabulary_file: "twice.txt")", "twice.txt: line 3 repeats 'a'"},
      {R"(vocabulary_file: "empty.txt")", "empty.txt: no lines"},
      {R"(vocabulary_file: "twice.txt" vocabulary_size: 5)", "twice.txt: line 3 repeats"},
  };
  for (const auto& c : cases) {
    proto::ModelSpec spec;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        "feature_column { name: \"v\" vocabulary_file { key: \"k\" " + c.column + " } }", &spec));
    Status s = ReadVocabularyFiles(&spec, dir.path());
    EXPECT_NE(s.message().find("feature column v: vocabulary file "), std::string::npos);
    EXPECT_NE(s.message().find(c.error), std::string::npos) << s.ToString();
  }
  std::ofstream(dir.path() + "/two.txt") << "a\nb\n";
  proto::ModelSpec spec;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(feature_column { name: "v" vocabulary_file { key: "k" vocabulary_file: "two.txt"
                          vocabulary_size: 3 } })",
      &spec));
  Status s = ReadVocabularyFiles(&spec, dir.path());
  EXPECT_NE(s.message().find("two.txt: 2 lines, fewer than vocabulary_size 3"), std::string::npos)
      << s.ToString();
}

TEST(FeatureColumns, ColumnsThatDoNotHoldTogetherAreRefusedByName) {
  const struct {
    std::string text, error;
  } cases[] = {
      {R"(feature_column { name: "x" numeric { key: "nope" } })", "no input column 'nope'"},
      {R"(feature_column { name: "x" numeric { key: "education" } })", "holds strings"},
      {R"(feature_column { name: "x" bucketized { source: "age" boundaries: [1] } })",
       "not a numeric column"},
      {R"(feature_column { name: "age" numeric { key: "age" } }
          feature_column { name: "x" bucketized { source: "age" boundaries: [3, 2] } })",
       "ascending"},
      {R"(feature_column { name: "x" crossed { keys: ["age", "education"] hash_bucket_size: 9 } })",
       "input column age holds numbers"},
      {R"(feature_column { name: "x" embedding { source: "y" dimension: 8 } })",
       "no feature column 'y'"},
      {R"(feature_column { name: "o" hash_bucket { key: "occupation" hash_bucket_size: 10 } }
          feature_column { name: "x" crossed { columns: ["o"] keys: ["education"]
                                                hash_bucket_size: 9 } })",
       "cannot be crossed"},
      {R"(feature_column { name: "x" vocabulary_list { key: "education" } })",
       "an empty vocabulary"},
      {R"(feature_column { name: "x" vocabulary_list { key: "education" vocabulary: ["a", "a"] } })",
       "'a' is in the vocabulary twice"},
  };
  TempDir dir;
  const std::string path = dir.path() + "/rows.csv";
  std::ofstream(path) << kRows;
  auto ds = ReadCsvFile(path, Options());
  PS_ASSERT_OK(ds);
  for (const auto& c : cases) {
    auto created = FeatureColumns::Create(Parse(c.text), ds->columns);
    SCOPED_TRACE(::testing::Message() << c.text);
    PS_ASSERT_CODE(created, Code::kInvalidArgument);
    EXPECT_NE(created.status().message().find(c.error), std::string::npos)
        << created.status().ToString();
  }
}

}  // namespace
}  // namespace data
}  // namespace pstrain
