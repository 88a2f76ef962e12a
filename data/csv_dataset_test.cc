#include "data/csv_dataset.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

// UCI's census columns, as TensorFlow's census tutorial names them.
CsvOptions Census() {
  CsvOptions o;
  for (const char* name :
       {"age", "workclass", "fnlwgt", "education", "education_num", "marital_status", "occupation",
        "relationship", "race", "gender", "capital_gain", "capital_loss", "hours_per_week",
        "native_country", "income_bracket"}) {
    const std::string n = name;
    const bool numeric = n == "age" || n == "fnlwgt" || n == "education_num" ||
                         n == "capital_gain" || n == "capital_loss" || n == "hours_per_week";
    o.columns.push_back({n, numeric});
  }
  o.label_column = "income_bracket";
  o.label_vocabulary = {"<=50K", ">50K"};
  return o;
}

std::string Write(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// The first lines of UCI's adult.test, quirks and all: the comment line,
// ", " separators, "?" for missing values, labels ending in "." and the
// file's blank last line.
TEST(CsvDataset, ReadsUcisAdultTestAsTheCensusTutorialDoes) {
  TempDir dir;
  const std::string path = Write(
      dir, "adult.test",
      "|1x3 Cross validator\n"
      "25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, "
      "0, 0, 40, United-States, <=50K.\n"
      "18, ?, 103497, Some-college, 10, Never-married, ?, Own-child, White, Female, 0, 0, 30, "
      "United-States, <=50K.\n"
      "44, Private, 160323, Some-college, 10, Married-civ-spouse, Machine-op-inspct, Husband, "
      "Black, Male, 7688, 0, 40, United-States, >50K.\r\n"
      "\n");
  auto ds = ReadCsvFile(path, Census());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->count, 3);
  EXPECT_EQ(ds->labels, (std::vector<int32_t>{0, 0, 1}));
  ASSERT_EQ(ds->columns.size(), 14u) << "the label is not a feature";
  const int workclass = ds->ColumnIndex("workclass");
  const int gain = ds->ColumnIndex("capital_gain");
  ASSERT_GE(workclass, 0);
  EXPECT_EQ(ds->strings[workclass], (std::vector<std::string>{"Private", "?", "Private"}));
  EXPECT_EQ(ds->numbers[gain], (std::vector<float>{0, 0, 7688}));
  EXPECT_EQ(ds->strings[ds->ColumnIndex("native_country")][2], "United-States");
  EXPECT_EQ(ds->ColumnIndex("income_bracket"), -1);
}

TEST(CsvDataset, AMissingNumberReadsAsZero) {
  TempDir dir;
  const std::string path =
      Write(dir, "rows.csv",
            "?, Private, 1, HS-grad, 9, Divorced, Sales, Unmarried, White, Female, 0, 0, 40, "
            "?, <=50K\n");
  auto ds = ReadCsvFile(path, Census());
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->numbers[ds->ColumnIndex("age")][0], 0.0f);
  EXPECT_EQ(ds->strings[ds->ColumnIndex("native_country")][0], "?");
}

TEST(CsvDataset, AMalformedRowIsRefusedNamingTheFileLineAndColumn) {
  TempDir dir;
  const std::string good =
      "39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, "
      "Male, 2174, 0, 40, United-States, <=50K\n";
  const struct {
    std::string row, error;
  } cases[] = {
      {"39, State-gov, 77516\n", ":3: 3 values, want 15"},
      {"3x9, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
       "White, Male, 2174, 0, 40, United-States, <=50K\n",
       ":3: column age: '3x9' is not a number"},
      {"39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, "
       "White, Male, 2174, 0, 40, United-States, =50K\n",
       ":3: column income_bracket: label '=50K' is not in the label vocabulary"},
  };
  for (const auto& c : cases) {
    const std::string path = Write(dir, "bad.csv", "|comment\n" + good + c.row);
    auto ds = ReadCsvFile(path, Census());
    ASSERT_FALSE(ds.ok()) << c.row;
    EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
    EXPECT_NE(ds.status().message().find(path + c.error), std::string::npos)
        << ds.status().ToString();
  }
  EXPECT_EQ(ReadCsvFile(dir.path() + "/none.csv", Census()).status().code(), Code::kNotFound);
  EXPECT_EQ(ReadCsvFile(Write(dir, "empty.csv", "|only a comment\n"), Census()).status().code(),
            Code::kInvalidArgument);
  CsvOptions no_label = Census();
  no_label.label_column = "income";
  EXPECT_NE(ReadCsvFile(Write(dir, "x.csv", good), no_label)
                .status()
                .message()
                .find("the label column 'income' is not one of the CSV columns"),
            std::string::npos);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
