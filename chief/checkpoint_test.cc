#include "chief/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "chief/tf_bundle.h"
#include "core/atomic_file.h"
#include "core/crc32c.h"
#include "core/test_util.h"
#include "core/testing/status_assertions.h"
#include "proto/checkpoint.pb.h"
#include "ps/testing/row_blocks.h"

namespace pstrain {
namespace {

// Flips a bit of the byte at `offset`.
void Corrupt(const std::string& path, size_t offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(offset);
  char c;
  f.get(c);
  f.seekp(offset);
  f.put(static_cast<char>(c ^ 0x40));
}

class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pstrain_ckpt_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    a_ = Tensor({3, 2}, {1.5f, -2.25f, 3e-8f, 4e20f, -0.0f, 6});
    b_ = Tensor({4}, {7, 8, 9, 10});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write() {
    auto prefix =
        WriteCheckpoint(dir_.string(), 120, {{"conv1/weights", &a_}, {"conv1/biases", &b_}});
    EXPECT_TRUE(prefix.ok()) << prefix.status().ToString();
    return *prefix;
  }

  std::filesystem::path dir_;
  Tensor a_, b_;
};

proto::RowBlock Block(const std::vector<int64_t>& keys, const std::vector<float>& values,
                      bool erase = false) {
  return MakeRowBlock("emb", keys, values, erase);
}

// A table's blocks go to the rows file as they come and read back one at
// a time, each checked; a byte changed in the rows is found.
TEST_F(CheckpointTest, TableRowsRoundTripBlockByBlockAndACorruptBlockIsFound) {
  auto writer = CheckpointWriter::Create(dir_.string(), 7);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->AddTensor("w", b_));
  (*writer)->SetDeltaBase(3);
  PS_ASSERT_OK((*writer)->BeginTable("emb", 1, {"accumulator"}));  // 2 floats a row
  PS_ASSERT_OK((*writer)->AddRows(Block({5, -9}, {1, 2, 3, 4})));
  PS_ASSERT_OK((*writer)->AddRows(Block({11}, {5, 6})));
  PS_ASSERT_OK((*writer)->AddRows(Block({42}, {}, /*erase=*/true)));
  EXPECT_EQ((*writer)->AddRows(Block({1, 2}, {1, 2, 3})).code(), Code::kInvalidArgument);
  auto prefix = (*writer)->Finish();
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();

  auto ckpt = ReadCheckpoint(*prefix);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->delta_base_step, std::optional<int64_t>(3));
  ASSERT_EQ(ckpt->tables.size(), 1u);
  EXPECT_EQ(ckpt->tables[0].num_rows(), 3);
  auto reader = TableRowsReader::Open(*prefix, ckpt->tables[0]);
  PS_ASSERT_OK(reader);
  proto::RowBlock got;
  std::vector<std::string> keys;
  for (;;) {
    auto more = (*reader)->Next(&got);
    ASSERT_TRUE(more.ok()) << more.status().ToString();
    if (!*more) break;
    keys.push_back(got.keys());
    if (keys.size() == 2) {
      EXPECT_EQ(got.values(), Block({11}, {5, 6}).values());
    }
  }
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_TRUE(got.erase());

  Corrupt(*prefix + ".rows", 20);  // in the first block's values
  auto corrupt = TableRowsReader::Open(*prefix, ckpt->tables[0]);
  auto first = (*corrupt)->Next(&got);
  EXPECT_EQ(first.status().code(), Code::kDataLoss);
  EXPECT_NE(first.status().message().find("block 0 of embedding table emb"), std::string::npos)
      << first.status().ToString();
  std::filesystem::resize_file(*prefix + ".rows", 30);
  EXPECT_EQ(ReadCheckpoint(*prefix).status().code(), Code::kDataLoss);
}

TEST_F(CheckpointTest, RoundTripIsBitExact) {
  const std::string prefix = Write();
  EXPECT_EQ(prefix, dir_.string() + "/model.ckpt-120");
  auto ckpt = ReadCheckpoint(prefix);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->global_step, 120);
  const Tensor& a = ckpt->tensors.at("conv1/weights");
  ASSERT_EQ(a.shape(), a_.shape());
  EXPECT_EQ(std::memcmp(a.data(), a_.data(), a.bytes()), 0);
  EXPECT_EQ(std::memcmp(ckpt->tensors.at("conv1/biases").data(), b_.data(), b_.bytes()), 0);
  // No temporary files are left behind.
  for (const auto& e : std::filesystem::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().string().find(".tmp-"), std::string::npos) << e.path();
  }
}

TEST_F(CheckpointTest, CorruptTensorIsNamed) {
  const std::string prefix = Write();
  Corrupt(prefix + ".data", a_.bytes() + 2);  // inside conv1/biases
  auto ckpt = ReadCheckpoint(prefix);
  EXPECT_EQ(ckpt.status().code(), Code::kDataLoss);
  EXPECT_NE(ckpt.status().message().find("conv1/biases"), std::string::npos)
      << ckpt.status().message();
  EXPECT_NE(ckpt.status().message().find("model.ckpt-120.data"), std::string::npos);
}

TEST_F(CheckpointTest, TruncatedFilesAreRejected) {
  const std::string prefix = Write();
  std::filesystem::resize_file(prefix + ".data", a_.bytes() + 4);
  auto ckpt = ReadCheckpoint(prefix);
  EXPECT_EQ(ckpt.status().code(), Code::kDataLoss);
  EXPECT_NE(ckpt.status().message().find("truncated"), std::string::npos);

  const std::string prefix2 = Write();
  auto size = std::filesystem::file_size(prefix2 + ".index");
  std::filesystem::resize_file(prefix2 + ".index", size - 3);
  ckpt = ReadCheckpoint(prefix2);
  EXPECT_EQ(ckpt.status().code(), Code::kDataLoss);
  EXPECT_NE(ckpt.status().message().find(".index"), std::string::npos);
}

TEST_F(CheckpointTest, CorruptIndexIsRejected) {
  const std::string prefix = Write();
  Corrupt(prefix + ".index", 20);
  EXPECT_EQ(ReadCheckpoint(prefix).status().code(), Code::kDataLoss);
  Corrupt(prefix + ".index", 20);  // restore
  Corrupt(prefix + ".index", 0);   // magic
  auto ckpt = ReadCheckpoint(prefix);
  EXPECT_EQ(ckpt.status().code(), Code::kDataLoss);
  EXPECT_NE(ckpt.status().message().find("magic"), std::string::npos);
}

// An index whose CRC is right but whose entries are hostile (a fuzzer found
// the first two: a zero-sized tensor passed a null pointer to memcpy, and
// shapes were not checked before allocating them).
TEST_F(CheckpointTest, HostileEntriesInAWellFormedIndexAreRefused) {
  const std::string prefix = Write();
  const std::string index_path = prefix + ".index";
  const std::string original = *ReadFileToString(index_path);
  uint64_t len = 0;
  std::memcpy(&len, original.data() + 8, sizeof(len));
  proto::CheckpointIndex index;
  ASSERT_TRUE(index.ParseFromArray(original.data() + 16, static_cast<int>(len)));
  // Rewrites the index with entry 1 changed by `edit`, its framing and CRC
  // made right again.
  auto rewrite = [&](const std::function<void(proto::CheckpointEntry*)>& edit) {
    proto::CheckpointIndex changed = index;
    edit(changed.mutable_entries(1));
    const std::string body = changed.SerializeAsString();
    std::string file = original.substr(0, 8);
    const uint64_t body_len = body.size();
    file.append(reinterpret_cast<const char*>(&body_len), sizeof(body_len));
    file += body;
    const uint32_t crc = crc32c::Mask(crc32c::Value(body.data(), body.size()));
    file.append(reinterpret_cast<const char*>(&crc), sizeof(crc));
    std::ofstream(index_path, std::ios::binary | std::ios::trunc) << file;
  };
  auto shape = [](std::initializer_list<int64_t> dims) {
    return [dims](proto::CheckpointEntry* e) {
      e->mutable_meta()->clear_shape();
      for (int64_t d : dims) e->mutable_meta()->add_shape(d);
      e->set_size(0);
      e->set_crc32c(crc32c::Value("", 0));
    };
  };
  rewrite(shape({0, 5}));  // an empty tensor: valid, and read as one
  auto read = ReadCheckpoint(prefix);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->tensors.at(index.entries(1).name()).shape(), (Shape{0, 5}));
  for (auto dims : {std::initializer_list<int64_t>{int64_t{1} << 40, int64_t{1} << 40},
                    std::initializer_list<int64_t>{-3}}) {
    rewrite(shape(dims));
    read = ReadCheckpoint(prefix);
    EXPECT_EQ(read.status().code(), Code::kDataLoss);
    EXPECT_NE(read.status().message().find(index.entries(1).name()), std::string::npos)
        << read.status().message();
  }
  rewrite([](proto::CheckpointEntry* e) { e->set_offset(UINT64_MAX - 2); });
  read = ReadCheckpoint(prefix);
  EXPECT_EQ(read.status().code(), Code::kDataLoss);
  EXPECT_NE(read.status().message().find("lies outside the file"), std::string::npos)
      << read.status().message();
}

TEST_F(CheckpointTest, StateFileRoundTrips) {
  EXPECT_EQ(ReadCheckpointState(dir_.string()).status().code(), Code::kNotFound);
  CheckpointState st{"model.ckpt-200", {"model.ckpt-100", "model.ckpt-200"}};
  PS_ASSERT_OK(WriteCheckpointState(dir_.string(), st));
  auto back = ReadCheckpointState(dir_.string());
  PS_ASSERT_OK(back);
  EXPECT_EQ(back->latest, "model.ckpt-200");
  EXPECT_EQ(back->kept, st.kept);
  auto text = ReadFileToString((dir_ / "checkpoint").string());
  EXPECT_EQ(*text,
            "model_checkpoint_path: \"model.ckpt-200\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-100\"\n"
            "all_model_checkpoint_paths: \"model.ckpt-200\"\n");
}

}  // namespace
}  // namespace pstrain

#include <sys/wait.h>

#include "chief/checkpoint_manager.h"

namespace pstrain {
namespace {

// In TensorFlow's format: the tensors in a TF bundle under their TF names
// (global_step with them), read back under pstrain's; the tables' rows and
// the delta base beside it, as in pstrain's format.
TEST(TfFormatCheckpoint, TensorsUnderTfNamesAndTablesBesideThem) {
  test_util::TempDir dir;
  const TfNameFn tf_name = [](const std::string& name) {
    return name == "w/accumulator" ? std::string("w/Adagrad") : name;
  };
  auto writer = CheckpointWriter::Create(dir.path(), 7, CheckpointFormat::kTensorFlow, tf_name);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->AddTensor("w", Tensor({2}, {1, 2})));
  PS_ASSERT_OK((*writer)->AddTensor("w/accumulator", Tensor({2}, {3, 4})));
  (*writer)->SetDeltaBase(3);
  PS_ASSERT_OK((*writer)->BeginTable("emb", 1, {"accumulator"}));
  PS_ASSERT_OK((*writer)->AddRows(Block({5, -9}, {1, 2, 3, 4})));
  auto prefix = (*writer)->Finish();
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();

  auto bundle = ReadTfBundle(*prefix);  // as TensorFlow sees it
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  EXPECT_EQ(bundle->size(), 3u);
  EXPECT_EQ(bundle->at("w/Adagrad").floats[1], 4.0f);
  EXPECT_EQ(bundle->at("global_step").int64s, (std::vector<int64_t>{7}));

  auto ckpt = ReadCheckpoint(*prefix);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->global_step, 7);
  ASSERT_EQ(ckpt->tensors.size(), 2u);
  EXPECT_EQ(ckpt->tensors.at("w/accumulator")[0], 3.0f);
  EXPECT_EQ(ckpt->delta_base_step, std::optional<int64_t>(3));
  ASSERT_EQ(ckpt->tables.size(), 1u);
  auto reader = TableRowsReader::Open(*prefix, ckpt->tables[0]);
  PS_ASSERT_OK(reader);
  proto::RowBlock got;
  auto more = (*reader)->Next(&got);
  ASSERT_TRUE(more.ok() && *more) << more.status().ToString();
  EXPECT_EQ(got.keys(), Block({5, -9}, {1, 2, 3, 4}).keys());
}

// A full checkpoint in TensorFlow's format holds each table as TF's hash
// tables export theirs, "<table>-keys" and "<table>-values" (the rows
// without their slots), and each slot as "<table>/<slot>-values", streamed
// over several blocks and tables, and nothing of them twice: no rows file.
// pstrain's reader leaves them in the file and restores from them block by
// block, each block checked.
TEST(TfFormatCheckpoint, FullCheckpointHoldsEachTableOnceInTheBundle) {
  test_util::TempDir dir;
  auto writer = CheckpointWriter::Create(dir.path(), 9, CheckpointFormat::kTensorFlow);
  PS_ASSERT_OK(writer);
  PS_ASSERT_OK((*writer)->AddTensor("w", Tensor({2}, {1, 2})));
  PS_ASSERT_OK((*writer)->BeginTable("users/embedding_weights", 2, {"accumulator"}));
  PS_ASSERT_OK((*writer)->AddRows(Block({5, -9}, {1, 2, 10, 20, 3, 4, 30, 40})));
  PS_ASSERT_OK((*writer)->AddRows(Block({1LL << 40}, {5, 6, 50, 60})));
  PS_ASSERT_OK((*writer)->BeginTable("items", 1, {}));
  PS_ASSERT_OK((*writer)->AddRows(Block({3}, {7})));
  PS_ASSERT_OK((*writer)->BeginTable("empty", 4, {}));
  auto prefix = (*writer)->Finish();
  ASSERT_TRUE(prefix.ok()) << prefix.status().ToString();

  auto bundle = ReadTfBundle(*prefix);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  const BundleTensor& keys = bundle->at("users/embedding_weights-keys");
  EXPECT_EQ(keys.dtype, tensorflow::DT_INT64);
  EXPECT_EQ(keys.int64s, (std::vector<int64_t>{5, -9, 1LL << 40}));
  const BundleTensor& values = bundle->at("users/embedding_weights-values");
  EXPECT_EQ(values.shape, (Shape{3, 2}));
  EXPECT_EQ(std::vector<float>(values.floats.data(), values.floats.data() + 6),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(bundle->at("items-keys").int64s, (std::vector<int64_t>{3}));
  EXPECT_EQ(bundle->at("items-values").floats[0], 7.0f);
  EXPECT_EQ(bundle->at("empty-keys").shape, (Shape{0}));
  EXPECT_EQ(bundle->at("empty-values").shape, (Shape{0, 4}));

  const BundleTensor& slot = bundle->at("users/embedding_weights/accumulator-values");
  EXPECT_EQ(slot.shape, (Shape{3, 2}));
  EXPECT_EQ(std::vector<float>(slot.floats.data(), slot.floats.data() + 6),
            (std::vector<float>{10, 20, 30, 40, 50, 60}));
  EXPECT_FALSE(std::filesystem::exists(*prefix + ".rows")) << "a table written twice";

  auto ckpt = ReadCheckpoint(*prefix);
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->tensors.size(), 1u);  // "w": the tables stay in the file
  ASSERT_EQ(ckpt->tables.size(), 3u);
  EXPECT_EQ(ckpt->tables[0].num_rows(), 3);
  // Read back block by block as the ps tasks sent them, slots beside values.
  auto reader = TableRowsReader::Open(*prefix, ckpt->tables[0]);
  PS_ASSERT_OK(reader);
  proto::RowBlock got;
  for (const proto::RowBlock& sent :
       {Block({5, -9}, {1, 2, 10, 20, 3, 4, 30, 40}), Block({1LL << 40}, {5, 6, 50, 60})}) {
    auto more = (*reader)->Next(&got);
    ASSERT_TRUE(more.ok() && *more) << more.status().ToString();
    EXPECT_EQ(got.keys(), sent.keys());
    EXPECT_EQ(got.values(), sent.values());
  }
  auto end = (*reader)->Next(&got);
  ASSERT_TRUE(end.ok() && !*end) << end.status().ToString();

  // A flipped byte in a slot's values is the block's DataLoss, named.
  const uint64_t slot_at = ckpt->tables[0].bundle_rows().slot_offsets(0);
  Corrupt(TfBundleDataPath(*prefix), slot_at + 2);
  auto corrupt = TableRowsReader::Open(*prefix, ckpt->tables[0]);
  PS_ASSERT_OK(corrupt);
  PS_EXPECT_CODE((*corrupt)->Next(&got), Code::kDataLoss);
}

// A crash at every write point of a checkpoint save (each file's writes,
// fsync, rename and directory fsync: data, index, state file, deletions
// after) leaves the previous checkpoint whole and found on restart, in
// either format.
class CheckpointCrash : public ::testing::TestWithParam<CheckpointFormat> {};

TEST_P(CheckpointCrash, EveryWritePointLeavesThePreviousCheckpointWhole) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("pstrain_crash_" + std::to_string(getpid()));
  std::map<std::string, Tensor> v1, v2;
  v1.emplace("w", Tensor({64}, std::vector<float>(64, 1.0f)));
  v2.emplace("w", Tensor({64}, std::vector<float>(64, 2.0f)));
  int crashed_at = 0;
  for (int point = 1;; ++point) {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    // In TensorFlow's format "w" is "tf/w" there.
    const TfNameFn tf_name = [](const std::string& name) { return "tf/" + name; };
    {
      CheckpointManager m({dir.string(), 1, 10000});
      m.SetFormat(GetParam(), tf_name);
      PS_ASSERT_OK(m.Save(100, v1));
    }
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      CheckpointManager m({dir.string(), 1, 10000});
      m.SetFormat(GetParam(), tf_name);
      CrashAtWritePointForTest(point);
      _exit(m.Save(200, v2).ok() ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    CheckpointManager after({dir.string(), 1, 10000});
    auto ckpt = after.LoadLatest();
    ASSERT_TRUE(ckpt.ok()) << "crash at write point " << point << ": " << ckpt.status().ToString();
    if (WEXITSTATUS(status) == 0) {
      // The save ran to the end: point is past the last write point.
      EXPECT_EQ(ckpt->global_step, 200);
      break;
    }
    ASSERT_EQ(WEXITSTATUS(status), kCrashExitCode);
    crashed_at = point;
    // Either the old checkpoint, whole, or (crash after the new index was
    // renamed into place) the new one, whole.
    const float expected = ckpt->global_step == 100 ? 1.0f : 2.0f;
    ASSERT_TRUE(ckpt->global_step == 100 || ckpt->global_step == 200);
    for (int64_t i = 0; i < 64; ++i) ASSERT_EQ(ckpt->tensors.at("w")[i], expected) << point;
  }
  EXPECT_GE(crashed_at, 8) << "a save has at least 8 write points (2 files x 4 + state file)";
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Formats, CheckpointCrash,
                         ::testing::Values(CheckpointFormat::kPstrain,
                                           CheckpointFormat::kTensorFlow),
                         [](const ::testing::TestParamInfo<CheckpointFormat>& info) {
                           return info.param == CheckpointFormat::kPstrain ? "Pstrain"
                                                                           : "TensorFlow";
                         });

}  // namespace
}  // namespace pstrain

namespace pstrain {
namespace {

TEST(CheckpointManagerTest, KeepsMaxToKeepAndSkipsACorruptNewest) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("pstrain_manager_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  CheckpointManager m({dir.string(), 2, 10000});
  for (int64_t step : {10, 20, 30}) {
    std::map<std::string, Tensor> t;
    t.emplace("w", Tensor({4}, std::vector<float>(4, static_cast<float>(step))));
    PS_ASSERT_OK(m.Save(step, t));
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "model.ckpt-10.index"));  // beyond max_to_keep
  EXPECT_TRUE(std::filesystem::exists(dir / "model.ckpt-20.index"));
  auto state = ReadCheckpointState(dir.string());
  PS_ASSERT_OK(state);
  EXPECT_EQ(state->kept, (std::vector<std::string>{"model.ckpt-20", "model.ckpt-30"}));

  std::filesystem::resize_file(dir / "model.ckpt-30.data", 5);  // truncated
  CheckpointManager restarted({dir.string(), 2, 10000});
  auto ckpt = restarted.LoadLatest();
  ASSERT_TRUE(ckpt.ok()) << ckpt.status().ToString();
  EXPECT_EQ(ckpt->global_step, 20);
  EXPECT_EQ(ckpt->tensors.at("w")[0], 20.0f);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pstrain
