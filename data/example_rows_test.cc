#include "data/example_rows.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "core/fingerprint.h"
#include "core/testing/status_assertions.h"
#include "core/tfrecord.h"
#include "data/test_util.h"
#include "proto/example.pb.h"

namespace pstrain {
namespace data {
namespace {

// A recommender's example: the movies a user watched (ids, weighted by the
// rating), the words of their tags (strings), the label.
std::string Example(const std::vector<int64_t>& movies, const std::vector<float>& ratings,
                    const std::vector<std::string>& tags, int64_t label) {
  tensorflow::Example e;
  auto& f = *e.mutable_features()->mutable_feature();
  for (int64_t m : movies) f["movies"].mutable_int64_list()->add_value(m);
  for (float r : ratings) f["ratings"].mutable_float_list()->add_value(r);
  for (const std::string& t : tags) f["tags"].mutable_bytes_list()->add_value(t);
  f["label"].mutable_int64_list()->add_value(label);
  return e.SerializeAsString();
}

proto::ExampleInputSpec Spec() {
  proto::ExampleInputSpec spec;
  spec.set_label_key("label");
  auto* movies = spec.add_feature();
  movies->set_name("movies");
  movies->set_weight_key("ratings");
  auto* tags = spec.add_feature();
  tags->set_name("tags");
  tags->set_hash_buckets(100);
  return spec;
}

std::string WriteRecords(const TempDir& dir, const std::vector<std::string>& records) {
  std::string bytes;
  for (const std::string& r : records) AppendTfRecord(r, &bytes);
  const std::string path = dir.path() + "/rows.tfrecords";
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ExampleRows, VarLenFeaturesBecomeRaggedIdsWithTheirWeights) {
  TempDir dir;
  const std::string path =
      WriteRecords(dir, {Example({7, 3, 7}, {5, 4, 1}, {"funny", "dark"}, 1),
                         Example({}, {}, {}, 0),  // no values at all: empty rows
                         Example({42}, {2}, {"funny"}, 2)});
  auto rows = ReadExampleRows(path, Spec(), 3);
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(rows->count, 3);
  EXPECT_EQ(rows->labels, (std::vector<int32_t>{1, 0, 2}));
  const RaggedIds& movies = rows->sparse.at("movies");
  EXPECT_EQ(movies.values, (std::vector<int64_t>{7, 3, 7, 42}));
  EXPECT_EQ(movies.row_splits, (std::vector<int64_t>{0, 3, 3, 4}));
  EXPECT_EQ(movies.weights, (std::vector<float>{5, 4, 1, 2}));
  const RaggedIds& tags = rows->sparse.at("tags");
  const int64_t funny = StringToHashBucketFast("funny", 100);
  EXPECT_EQ(tags.values, (std::vector<int64_t>{funny, StringToHashBucketFast("dark", 100), funny}));
  EXPECT_TRUE(tags.weights.empty());
  PS_EXPECT_OK(tags.Check("tags"));
}

TEST(ExampleRows, ARecordThatDoesNotFitIsRefusedNamingTheRecordAndFeature) {
  TempDir dir;
  const struct {
    std::string record, error;
  } cases[] = {
      {Example({1}, {1}, {}, 5), "record 1: feature label: the label must be one int64 in [0, 3)"},
      {Example({1, 2}, {1}, {}, 0), "record 1: feature movies: 2 values, 1 float weights"},
      {"not an example at all", "record 1: not a tf.train.Example"},
  };
  for (const auto& c : cases) {
    const std::string path = WriteRecords(dir, {Example({1}, {1}, {"a"}, 0), c.record});
    auto rows = ReadExampleRows(path, Spec(), 3);
    SCOPED_TRACE(::testing::Message() << c.error);
    PS_ASSERT_CODE(rows, Code::kInvalidArgument);
    EXPECT_NE(rows.status().message().find(path + ": " + c.error), std::string::npos)
        << rows.status().ToString();
  }
  proto::ExampleInputSpec hashed_ids = Spec();
  hashed_ids.mutable_feature(0)->set_hash_buckets(10);
  auto rows = ReadExampleRows(WriteRecords(dir, {Example({1}, {1}, {}, 0)}), hashed_ids, 3);
  EXPECT_NE(rows.status().message().find("int64 values are ids, not hashed"), std::string::npos)
      << rows.status().ToString();
  EXPECT_EQ(ReadExampleRows(dir.path() + "/none", Spec(), 3).status().code(), Code::kNotFound);
}

// The movies and tags of Example(), as the columns of a model of columns:
// ratings numeric, movies and tags strings.
proto::ExampleInputSpec TableSpec(bool ratings_numeric) {
  proto::ExampleInputSpec spec;
  spec.set_label_key("label");
  auto* ratings = spec.add_column();
  ratings->set_name("ratings");
  ratings->set_numeric(ratings_numeric);
  spec.add_column()->set_name("movies");
  spec.add_column()->set_name("tags");
  return spec;
}

TEST(ExampleTable, NumbersAreOneValueAndStringsAsManyAsTheExampleHas) {
  TempDir dir;
  const std::string path =
      WriteRecords(dir, {Example({7, 3}, {5}, {"funny", "dark"}, 1), Example({}, {2.5f}, {}, 0)});
  auto ds = ReadExampleTable(path, TableSpec(true), 2);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_EQ(ds->count, 2);
  EXPECT_EQ(ds->labels, (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(ds->numbers[0], (std::vector<float>{5, 2.5f}));
  const auto strings = [&](int column, int64_t row) {
    auto [first, last] = ds->Strings(column, row);
    return std::vector<std::string>(first, last);
  };
  EXPECT_EQ(strings(1, 0), (std::vector<std::string>{"7", "3"}));  // int64s as decimal text
  EXPECT_EQ(strings(2, 0), (std::vector<std::string>{"funny", "dark"}));
  EXPECT_TRUE(strings(1, 1).empty());
  EXPECT_TRUE(strings(2, 1).empty());
}

TEST(ExampleTable, AColumnTheExampleCannotFillIsRefusedNamingTheRecord) {
  TempDir dir;
  const std::string two_ratings = WriteRecords(dir, {Example({1, 2}, {4, 5}, {}, 0)});
  auto ds = ReadExampleTable(two_ratings, TableSpec(true), 2);
  EXPECT_NE(ds.status().message().find(
                two_ratings + ": record 0: feature ratings: a numeric column needs one float"),
            std::string::npos)
      << ds.status().ToString();
  ds = ReadExampleTable(two_ratings, TableSpec(false), 2);
  EXPECT_NE(ds.status().message().find("feature ratings: floats, for a column of strings"),
            std::string::npos)
      << ds.status().ToString();
  // WriteRecords writes one file: the one above is replaced.
  const std::string none = WriteRecords(dir, {Example({1}, {}, {}, 0)});
  PS_EXPECT_CODE(ReadExampleTable(none, TableSpec(true), 2), Code::kInvalidArgument);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
