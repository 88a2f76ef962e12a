#include "data/example_dataset.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "core/tfrecord.h"
#include "data/test_util.h"
#include "proto/example.pb.h"

namespace pstrain {
namespace data {
namespace {

// Protocol-buffer wire format by hand, with the field numbers of TensorFlow's
// feature.proto and example.proto.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
// A length-delimited field (wire type 2).
std::string Field(int number, const std::string& payload) {
  return Varint((number << 3) | 2) + Varint(payload.size()) + payload;
}
// Feature{int64_list = 3 {value = 1 [packed]}}.
std::string Int64Feature(uint64_t v) { return Field(3, Field(1, Varint(v))); }
// Feature{bytes_list = 1 {value = 1}}.
std::string BytesFeature(const std::string& b) { return Field(1, Field(1, b)); }
// One entry of Features.feature = 1: map<string, Feature> (key = 1, value = 2).
std::string Entry(const std::string& key, const std::string& feature) {
  return Field(1, Field(1, key) + Field(2, feature));
}
// Example{features = 1}.
std::string ExampleBytes(const std::string& entries) { return Field(1, entries); }

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Writes `records` as a plain TFRecord file.
void WriteRecords(const std::string& path, const std::vector<std::string>& records) {
  std::string bytes;
  for (const std::string& r : records) AppendTfRecord(r, &bytes);
  WriteFile(path, bytes, /*gzip=*/false);
}

// Three 2x1x3 images: value c of pixel p of image i is 30 * i + 3 * p + c.
ImageDataset ThreeColorImages() {
  ImageDataset ds;
  ds.count = 3;
  ds.rows = 2;
  ds.cols = 1;
  ds.depth = 3;
  for (int i = 0; i < 18; ++i) ds.pixels.push_back(static_cast<uint8_t>(i + 24 * (i / 6)));
  ds.labels = {7, 0, 9};
  return ds;
}

TEST(SerializeImageExample, WritesTensorFlowsWireFormat) {
  const uint8_t pixel = 42;
  const std::string expected =
      ExampleBytes(Entry("depth", Int64Feature(1)) + Entry("height", Int64Feature(1)) +
                   Entry("image_raw", BytesFeature("*")) + Entry("label", Int64Feature(7)) +
                   Entry("width", Int64Feature(1)));
  EXPECT_EQ(SerializeImageExample(&pixel, 1, 1, 1, 7), expected);
}

TEST(ReadExampleFile, ReadsHandEncodedExamples) {
  TempDir dir;
  const std::string path = dir.path() + "/train.tfrecords";
  // Keys in another order than ours; the label of the second unpacked
  // (Int64List.value as a plain varint, tag 0x08), which parsers accept too.
  const std::string first =
      ExampleBytes(Entry("label", Int64Feature(3)) + Entry("image_raw", BytesFeature("\x01\x02")) +
                   Entry("width", Int64Feature(2)) + Entry("height", Int64Feature(1)) +
                   Entry("depth", Int64Feature(1)));
  const std::string second =
      ExampleBytes(Entry("height", Int64Feature(1)) + Entry("width", Int64Feature(2)) +
                   Entry("depth", Int64Feature(1)) + Entry("image_raw", BytesFeature("\xfe\xff")) +
                   Entry("label", Field(3, std::string("\x08\x09", 2))));
  WriteRecords(path, {first, second});
  StatusOr<ImageDataset> ds = ReadExampleFile(path);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ(ds->count, 2);
  EXPECT_EQ(ds->rows, 1);
  EXPECT_EQ(ds->cols, 2);
  EXPECT_EQ(ds->depth, 1);
  EXPECT_EQ(ds->pixels, (std::vector<uint8_t>{1, 2, 254, 255}));
  EXPECT_EQ(ds->labels, (std::vector<int32_t>{3, 9}));
}

TEST(WriteExampleFile, RoundTripsPlainAndGzip) {
  TempDir dir;
  const ImageDataset ds = ThreeColorImages();
  for (TfRecordCompression c : {TfRecordCompression::kNone, TfRecordCompression::kGzip}) {
    const std::string path = dir.path() + "/f";
    PS_ASSERT_OK(WriteExampleFile(ds, path, c));
    const std::string bytes = ReadBytes(path);
    EXPECT_EQ(bytes.size() > 2 && bytes[0] == '\x1f' && bytes[1] == '\x8b',
              c == TfRecordCompression::kGzip);
    StatusOr<ImageDataset> back = ReadExampleFile(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->count, 3);
    EXPECT_EQ(back->rows, 2);
    EXPECT_EQ(back->cols, 1);
    EXPECT_EQ(back->depth, 3);
    EXPECT_EQ(back->pixels, ds.pixels);
    EXPECT_EQ(back->labels, ds.labels);
  }
}

// A valid Example of a 1x2x1 image, for the cases below to break.
tensorflow::Example GoodExample() {
  tensorflow::Example ex;
  auto& f = *ex.mutable_features()->mutable_feature();
  f["image_raw"].mutable_bytes_list()->add_value("ab");
  f["label"].mutable_int64_list()->add_value(4);
  f["height"].mutable_int64_list()->add_value(1);
  f["width"].mutable_int64_list()->add_value(2);
  f["depth"].mutable_int64_list()->add_value(1);
  return ex;
}

TEST(ReadExampleFile, BadExamplesAreInvalidArgumentNamingTheRecord) {
  using Features = google::protobuf::Map<std::string, tensorflow::Feature>;
  struct Case {
    const char* name;
    void (*edit)(Features* f);
    const char* message;
  };
  const Case cases[] = {
      {"no image_raw", [](Features* f) { f->erase("image_raw"); }, "has no \"image_raw\" feature"},
      {"no label", [](Features* f) { f->erase("label"); }, "has no \"label\" feature"},
      {"no depth", [](Features* f) { f->erase("depth"); }, "has no \"depth\" feature"},
      {"label as floats", [](Features* f) { (*f)["label"].mutable_float_list()->add_value(4); },
       "feature \"label\" is float_list, expected int64_list"},
      {"image as ints", [](Features* f) { (*f)["image_raw"].mutable_int64_list()->add_value(4); },
       "feature \"image_raw\" is int64_list, expected bytes_list"},
      {"two labels", [](Features* f) { (*f)["label"].mutable_int64_list()->add_value(5); },
       "feature \"label\" holds 2 values, expected 1"},
      {"label 10", [](Features* f) { (*f)["label"].mutable_int64_list()->set_value(0, 10); },
       "label 10 is not in 0..9"},
      {"negative label", [](Features* f) { (*f)["label"].mutable_int64_list()->set_value(0, -1); },
       "label -1 is not in 0..9"},
      {"image too short",
       [](Features* f) { (*f)["image_raw"].mutable_bytes_list()->set_value(0, "a"); },
       "image_raw holds 1 bytes, expected height*width*depth = 1x2x1 = 2"},
      {"zero height", [](Features* f) { (*f)["height"].mutable_int64_list()->set_value(0, 0); },
       "image shape 0x2x1 (height x width x depth) is not positive"},
      {"another shape",
       [](Features* f) {
         (*f)["width"].mutable_int64_list()->set_value(0, 1);
         (*f)["depth"].mutable_int64_list()->set_value(0, 2);
       },
       "image is 1x1x2 but the file's first is 1x2x1"},
  };
  TempDir dir;
  const std::string path = dir.path() + "/test.tfrecords";
  const std::string good = GoodExample().SerializeAsString();
  for (const Case& c : cases) {
    tensorflow::Example bad = GoodExample();
    c.edit(bad.mutable_features()->mutable_feature());
    WriteRecords(path, {good, bad.SerializeAsString(), good});
    StatusOr<ImageDataset> ds = ReadExampleFile(path);
    ASSERT_FALSE(ds.ok()) << c.name;
    EXPECT_EQ(ds.status().code(), Code::kInvalidArgument) << c.name;
    EXPECT_NE(ds.status().message().find(path + ": record 1 at offset "), std::string::npos)
        << c.name << ": " << ds.status().message();
    EXPECT_NE(ds.status().message().find(c.message), std::string::npos)
        << c.name << ": " << ds.status().message();
  }
}

TEST(ReadExampleFile, RecordThatIsNotAnExampleIsInvalidArgument) {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  WriteRecords(path, {GoodExample().SerializeAsString(), "\xff\xff\xff"});
  StatusOr<ImageDataset> ds = ReadExampleFile(path);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kInvalidArgument);
  EXPECT_NE(ds.status().message().find("record 1 at offset"), std::string::npos);
  EXPECT_NE(ds.status().message().find("is not a tf.train.Example"), std::string::npos)
      << ds.status().message();
}

TEST(ReadExampleFile, CrcMismatchIsDataLossNamingTheRecord) {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  const std::string good = GoodExample().SerializeAsString();
  std::string bytes;
  for (int i = 0; i < 3; ++i) AppendTfRecord(good, &bytes);
  const size_t record_size = bytes.size() / 3;
  bytes[2 * record_size + 12 + good.size() - 1] ^= 0x01;  // record 2's last data byte
  WriteFile(path, bytes, false);
  StatusOr<ImageDataset> ds = ReadExampleFile(path);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kDataLoss);
  EXPECT_NE(ds.status().message().find(path + ": data CRC mismatch in record 2 at offset " +
                                       std::to_string(2 * record_size)),
            std::string::npos)
      << ds.status().message();
}

TEST(ReadExampleFile, TruncationIsDataLossNamingTheRecordPlainOrGzip) {
  TempDir dir;
  const std::string path = dir.path() + "/f";
  const std::string good = GoodExample().SerializeAsString();
  std::string bytes;
  for (int i = 0; i < 3; ++i) AppendTfRecord(good, &bytes);
  for (bool gzip : {false, true}) {
    WriteFile(path, bytes.substr(0, bytes.size() / 3 + 5), gzip);  // 5 bytes of record 1
    StatusOr<ImageDataset> ds = ReadExampleFile(path);
    ASSERT_FALSE(ds.ok());
    EXPECT_EQ(ds.status().code(), Code::kDataLoss) << gzip;
    EXPECT_NE(ds.status().message().find("truncated header (5 of 12 bytes) in record 1"),
              std::string::npos)
        << ds.status().message();
  }
  // A gzip file cut inside the compressed stream.
  WriteFile(path, bytes, /*gzip=*/true);
  const std::string gz = ReadBytes(path);
  WriteFile(path, gz.substr(0, gz.size() - 6), false);
  StatusOr<ImageDataset> ds = ReadExampleFile(path);
  ASSERT_FALSE(ds.ok());
  EXPECT_EQ(ds.status().code(), Code::kDataLoss);
  EXPECT_NE(ds.status().message().find(path + ": "), std::string::npos);
  EXPECT_NE(ds.status().message().find(" in record "), std::string::npos) << ds.status().message();
}

TEST(ReadExampleFile, EmptyFileIsInvalidArgument) {
  TempDir dir;
  WriteFile(dir.path() + "/f", "", false);
  EXPECT_EQ(ReadExampleFile(dir.path() + "/f").status().code(), Code::kInvalidArgument);
}

TEST(ReadExampleFile, MissingFileIsNotFound) {
  EXPECT_EQ(ReadExampleFile("/nonexistent/train.tfrecords").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace data
}  // namespace pstrain
