#include "chief/tf_bundle.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/test_util.h"
#include "core/testing/status_assertions.h"

namespace pstrain {
namespace {

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data(), t.data() + t.size());
}

std::string Bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A checkpoint TensorFlow 2.21's tf.compat.v1.train.Saver wrote
// (tests/tensorflow/tf_bundle_golden.py says what it holds).
TEST(TfBundle, ReadsWhatTensorFlowsSaverWrote) {
  auto bundle =
      ReadTfBundle(std::string(PSTRAIN_SOURCE_DIR) + "/chief/testdata/tf_saver/model.ckpt-42");
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  ASSERT_EQ(bundle->size(), 4u);
  const BundleTensor& weights = bundle->at("conv1/weights");
  EXPECT_EQ(weights.dtype, tensorflow::DT_FLOAT);
  EXPECT_EQ(weights.shape, (Shape{2, 2, 1, 3}));
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(weights.floats.data()[i], 0.5f * i);
  EXPECT_EQ(Values(bundle->at("softmax_linear/biases").floats), (std::vector<float>{-1, 0, 1}));
  EXPECT_EQ(Values(bundle->at("softmax_linear/biases/Momentum").floats),
            (std::vector<float>{0.25f, 0.5f, 0.75f}));
  const BundleTensor& step = bundle->at("global_step");
  EXPECT_EQ(step.dtype, tensorflow::DT_INT64);
  EXPECT_TRUE(step.shape.empty());
  EXPECT_EQ(step.int64s, (std::vector<int64_t>{42}));
}

// A TF 2 checkpoint (tf.train.Checkpoint of a Keras model,
// tests/tensorflow/keras_golden.py): its object graph is a string tensor,
// read whole and checked against its CRC32Cs.
TEST(TfBundle, ReadsTheObjectGraphStringOfATf2Checkpoint) {
  auto bundle =
      ReadTfBundle(std::string(PSTRAIN_SOURCE_DIR) + "/chief/testdata/keras/sequential.ckpt");
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  const BundleTensor& graph = bundle->at("_CHECKPOINTABLE_OBJECT_GRAPH");
  EXPECT_EQ(graph.dtype, tensorflow::DT_STRING);
  ASSERT_EQ(graph.strings.size(), 1u);
  tensorflow::TrackableObjectGraph parsed;
  ASSERT_TRUE(parsed.ParseFromString(graph.strings[0]));
  std::map<std::string, std::string> keys;
  for (const auto& node : parsed.nodes()) {
    for (const auto& a : node.attributes()) keys[a.full_name()] = a.checkpoint_key();
  }
  ASSERT_EQ(keys.count("sequential/dense_1/kernel"), 1u);
  const std::string& key = keys.at("sequential/dense_1/kernel");
  ASSERT_EQ(bundle->count(key), 1u) << key;
  EXPECT_EQ(bundle->at(key).shape, (Shape{784, 8}));
}

TEST(TfBundle, WhatItWritesReadsBackWhateverTheOrderOfAdding) {
  test_util::TempDir dir;
  const std::string prefix = dir.path() + "/model.ckpt-7";
  auto writer = TfBundleWriter::Create(prefix);
  ASSERT_TRUE(writer.ok()) << writer.status().ToString();
  PS_ASSERT_OK((*writer)->AddFloat("z/last", Tensor({2, 3}, {1, 2, 3, 4, 5, 6})));
  PS_ASSERT_OK((*writer)->AddInt64("global_step", {}, {7}));
  PS_ASSERT_OK((*writer)->AddFloat("a/scalar", Tensor({}, {-2.5f})));
  PS_EXPECT_CODE((*writer)->AddFloat("a/scalar", Tensor({}, {0})), Code::kInvalidArgument);
  PS_EXPECT_CODE((*writer)->AddInt64("ids", {3}, {1, 2}), Code::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(TfBundleIndexPath(prefix)));  // nothing visible yet
  PS_ASSERT_OK((*writer)->Finish());
  auto bundle = ReadTfBundle(prefix);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  ASSERT_EQ(bundle->size(), 3u);
  EXPECT_EQ(bundle->at("z/last").shape, (Shape{2, 3}));
  EXPECT_EQ(Values(bundle->at("z/last").floats), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Values(bundle->at("a/scalar").floats), (std::vector<float>{-2.5f}));
  EXPECT_EQ(bundle->at("global_step").int64s, (std::vector<int64_t>{7}));
  EXPECT_EQ(std::filesystem::file_size(TfBundleDataPath(prefix)), 6 * 4 + 8 + 4u);
}

TEST(TfBundle, ADamagedBundleIsRefusedNamingTheFileAndTensor) {
  test_util::TempDir dir;
  const std::string prefix = dir.path() + "/model.ckpt-1";
  EXPECT_EQ(ReadTfBundle(prefix).status().code(), Code::kNotFound);
  auto writer = TfBundleWriter::Create(prefix);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->AddFloat("w", Tensor({4}, {1, 2, 3, 4})));
  PS_ASSERT_OK((*writer)->Finish());
  const std::string data = Bytes(TfBundleDataPath(prefix));

  std::string flipped = data;
  flipped[5] ^= 1;
  std::ofstream(TfBundleDataPath(prefix), std::ios::binary) << flipped;
  Status s = ReadTfBundle(prefix).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find("tensor w: CRC32C mismatch"), std::string::npos) << s.ToString();

  std::ofstream(TfBundleDataPath(prefix), std::ios::binary) << data.substr(0, 12);
  s = ReadTfBundle(prefix).status();
  EXPECT_NE(s.message().find("tensor w: its 16 bytes at 0 do not lie in"), std::string::npos)
      << s.ToString();

  std::ofstream(TfBundleIndexPath(prefix), std::ios::binary) << "not a table at all";
  s = ReadTfBundle(prefix).status();
  EXPECT_EQ(s.code(), Code::kDataLoss);
  EXPECT_NE(s.message().find(TfBundleIndexPath(prefix) + ": not a tensor bundle index"),
            std::string::npos)
      << s.ToString();
}

}  // namespace
}  // namespace pstrain
