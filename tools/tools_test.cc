// Runs pstrain_convert and pstrain_fmnist_to_cifar and reads what they write
// with the data/ readers: Fashion-MNIST (or synthetic IDX files) -> CIFAR-10
// binaries -> LoadCifar10Split, and IDX / CIFAR-10 -> TFRecords ->
// LoadDataset; then damages their outputs and checks the readers' errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "core/testing/status_assertions.h"
#include "data/cifar_dataset.h"
#include "data/dataset_loader.h"
#include "data/mnist_dataset.h"
#include "data/test_util.h"

namespace pstrain {
namespace data {
namespace {

constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

bool HaveFashionMnist() {
  struct stat st;
  return stat((std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz").c_str(), &st) == 0;
}

// tools/<name> in the build directory: from PSTRAIN_BIN_DIR (set by ctest) or
// beside this test binary.
std::string Binary(const std::string& name) {
  const char* bin_dir = std::getenv("PSTRAIN_BIN_DIR");
  if (bin_dir != nullptr && bin_dir[0] != '\0') return std::string(bin_dir) + "/tools/" + name;
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) return name;
  const std::string path(self, n);
  return path.substr(0, path.rfind('/') + 1) + name;
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct RunResult {
  int exit_code = -1;
  std::string err;
};

// Runs tools/<name> with `args`, its stderr captured in `dir`.
RunResult RunTool(const std::string& name, const std::string& args, const std::string& dir) {
  const std::string binary = Binary(name);
  EXPECT_EQ(access(binary.c_str(), X_OK), 0) << binary << " not built";
  const std::string err = dir + "/" + name + ".stderr";
  const std::string command = binary + " " + args + " >/dev/null 2>" + err;
  RunResult result;
  const int status = std::system(command.c_str());
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  result.err = ReadBytes(err);
  std::filesystem::remove(err);
  return result;
}

// Expects exit 1 and exactly one line on stderr that contains `message`.
void ExpectBadInput(const RunResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << "\"" << message << "\" not in " << r.err;
}

std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.insert(entry.path().filename().string());
  }
  return names;
}

// Counts the pixels of `cifar` (32x32x3) images [0, count) that differ from
// `gray` images [0, count) (28x28x1) padded by 2 zeros on each side, the gray
// value in each of R, G and B; and the labels that differ.
int64_t PaddingMismatches(const ImageDataset& gray, const ImageDataset& cifar, int64_t count) {
  int64_t bad = 0;
  for (int64_t i = 0; i < count; ++i) {
    bad += gray.labels[i] != cifar.labels[i];
    const uint8_t* g = gray.pixels.data() + i * 784;
    const uint8_t* c = cifar.pixels.data() + i * 3072;
    for (int y = 0; y < 32; ++y) {
      for (int x = 0; x < 32; ++x) {
        const bool inside = y >= 2 && y < 30 && x >= 2 && x < 30;
        const uint8_t expected = inside ? g[(y - 2) * 28 + (x - 2)] : 0;
        for (int ch = 0; ch < 3; ++ch) bad += c[(y * 32 + x) * 3 + ch] != expected;
      }
    }
  }
  return bad;
}

// Runs pstrain_fmnist_to_cifar on `idx_dir` and checks every file it writes.
void CheckFmnistToCifar(const std::string& idx_dir) {
  TempDir out;
  const RunResult r = RunTool("pstrain_fmnist_to_cifar",
                              "--data_dir=" + idx_dir + " --output_dir=" + out.path(), out.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dir = out.path() + "/cifar-10-batches-bin";
  EXPECT_EQ(FilesIn(dir),
            (std::set<std::string>{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                   "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin",
                                   "batches.meta.txt"}));
  for (const std::string& name : Cifar10FileNames("train")) {
    EXPECT_EQ(std::filesystem::file_size(dir + "/" + name), 10000u * 3073) << name;
  }
  EXPECT_EQ(ReadBytes(dir + "/batches.meta.txt"),
            "T-shirt/top\nTrouser\nPullover\nDress\nCoat\nSandal\nShirt\nSneaker\nBag\n"
            "Ankle boot\n");

  StatusOr<ImageDataset> gray_train = LoadMnistSplit(idx_dir, "train");
  ASSERT_TRUE(gray_train.ok()) << gray_train.status().ToString();
  StatusOr<ImageDataset> train = LoadCifar10Split(out.path(), "train");
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(train->count, 50000);
  EXPECT_EQ(train->depth, 3);
  EXPECT_EQ(PaddingMismatches(*gray_train, *train, 50000), 0);

  StatusOr<ImageDataset> gray_test = LoadMnistSplit(idx_dir, "t10k");
  ASSERT_TRUE(gray_test.ok()) << gray_test.status().ToString();
  StatusOr<ImageDataset> test = LoadDataset(dir, "auto", "test");
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->count, 10000);
  EXPECT_EQ(PaddingMismatches(*gray_test, *test, 10000), 0);

  // Damaged copies: a short last record, then a label above 9.
  const std::string batch = dir + "/data_batch_3.bin";
  const std::string bytes = ReadBytes(batch);
  WriteFile(batch, bytes.substr(0, bytes.size() - 1), false);
  StatusOr<ImageDataset> short_file = LoadCifar10Split(out.path(), "train");
  EXPECT_EQ(short_file.status().code(), Code::kDataLoss);
  EXPECT_NE(short_file.status().message().find(batch + ": "), std::string::npos);
  EXPECT_NE(short_file.status().message().find("record 9999 is short (3072 of 3073 bytes)"),
            std::string::npos)
      << short_file.status().message();
  std::string bad_label = ReadBytes(dir + "/test_batch.bin");
  bad_label[5 * 3073] = 10;
  WriteFile(dir + "/test_batch.bin", bad_label, false);
  StatusOr<ImageDataset> bad = LoadCifar10Split(out.path(), "test");
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("test_batch.bin: record 5 has label 10"), std::string::npos)
      << bad.status().message();
}

TEST(FmnistToCifar, RoundTripsRealFashionMnist) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "Fashion-MNIST not installed in " << kFashionMnistDir;
  CheckFmnistToCifar(kFashionMnistDir);
}

TEST(FmnistToCifar, RoundTripsSyntheticIdxDroppingTheExtraTrainImages) {
  TempDir idx;
  WriteMnistSplit(idx.path(), "train", 50003, 28, 28, /*gzip=*/false);
  WriteMnistSplit(idx.path(), "t10k", 10000, 28, 28, /*gzip=*/true);
  CheckFmnistToCifar(idx.path());
}

TEST(FmnistToCifar, BadInputExitsOneWithOneLine) {
  TempDir dir;
  const std::string out = " --output_dir=" + dir.path() + "/out";
  ExpectBadInput(RunTool("pstrain_fmnist_to_cifar", "--data_dir=" + dir.path(), dir.path()),
                 "--output_dir is required");
  ExpectBadInput(RunTool("pstrain_fmnist_to_cifar", "--data_dir=" + dir.path() + out, dir.path()),
                 dir.path() + "/train-images-idx3-ubyte[.gz]: no such file");
  WriteMnistSplit(dir.path(), "train", 100, 28, 28, false);
  WriteMnistSplit(dir.path(), "t10k", 100, 28, 28, false);
  ExpectBadInput(RunTool("pstrain_fmnist_to_cifar", "--data_dir=" + dir.path() + out, dir.path()),
                 "train holds 100 images, fewer than the 50000 needed");
  WriteMnistSplit(dir.path(), "train", 3, 4, 5, false);
  ExpectBadInput(RunTool("pstrain_fmnist_to_cifar", "--data_dir=" + dir.path() + out, dir.path()),
                 "train images are 4x5x1, expected 28x28x1");
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/out"));
}

// Runs pstrain_convert and checks that LoadDataset reads back, from the
// TFRecords, exactly what it reads from the input.
void CheckConvert(const std::string& format, const std::string& data_dir,
                  const std::string& compression) {
  TempDir out;
  const RunResult r = RunTool("pstrain_convert",
                              "--input_format=" + format + " --data_dir=" + data_dir +
                                  " --output_dir=" + out.path() + " --compression=" + compression,
                              out.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string ext = compression == "gzip" ? ".gz" : "";
  EXPECT_EQ(FilesIn(out.path()),
            (std::set<std::string>{"train.tfrecords" + ext, "test.tfrecords" + ext}));
  for (const std::string split : {"train", "test"}) {
    StatusOr<ImageDataset> in = LoadDataset(data_dir, format, split);
    ASSERT_TRUE(in.ok()) << in.status().ToString();
    StatusOr<ImageDataset> back = LoadDataset(out.path(), "auto", split);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->count, in->count) << split;
    EXPECT_EQ(back->rows, in->rows);
    EXPECT_EQ(back->cols, in->cols);
    EXPECT_EQ(back->depth, in->depth);
    EXPECT_TRUE(back->pixels == in->pixels) << split << ": pixels differ";
    EXPECT_EQ(back->labels, in->labels) << split;
  }
  // Damaged copies: a flipped byte in the third record, then a cut file.
  const std::string path = out.path() + "/train.tfrecords" + ext;
  const std::string bytes = ReadBytes(path);
  StatusOr<ImageDataset> in = LoadDataset(data_dir, format, "train");
  PS_ASSERT_OK(in);
  std::string flipped = bytes;
  if (ext.empty()) {
    // Every record has the same size: the images do, and labels 0..9 take one byte.
    const size_t record = bytes.size() / in->count;
    ASSERT_EQ(bytes.size() % in->count, 0u);
    flipped[2 * record + 12 + 20] ^= 0x01;
    WriteFile(path, flipped, false);
    const Status s = LoadDataset(out.path(), "tfrecord", "train").status();
    EXPECT_EQ(s.code(), Code::kDataLoss);
    EXPECT_NE(s.message().find(path + ": data CRC mismatch in record 2 at offset " +
                               std::to_string(2 * record)),
              std::string::npos)
        << s.message();
  } else {
    flipped[flipped.size() / 2] ^= 0x01;
    WriteFile(path, flipped, false);
    const Status s = LoadDataset(out.path(), "tfrecord", "train").status();
    EXPECT_EQ(s.code(), Code::kDataLoss);
    EXPECT_NE(s.message().find(path + ": "), std::string::npos) << s.message();
    EXPECT_NE(s.message().find(" in record "), std::string::npos) << s.message();
  }
  WriteFile(path, bytes.substr(0, bytes.size() - 3), false);
  const Status cut = LoadDataset(out.path(), "tfrecord", "train").status();
  EXPECT_EQ(cut.code(), Code::kDataLoss);
  const std::string last = " in record " + std::to_string(in->count - (ext.empty() ? 1 : 0));
  EXPECT_NE(cut.message().find(path + ": "), std::string::npos) << cut.message();
  EXPECT_NE(cut.message().find(last), std::string::npos) << cut.message();
}

TEST(Convert, IdxRoundTripsThroughTfRecordsPlainAndGzip) {
  TempDir idx;
  WriteMnistSplit(idx.path(), "train", 25, 5, 4, /*gzip=*/true);
  WriteMnistSplit(idx.path(), "t10k", 7, 5, 4, /*gzip=*/false);
  CheckConvert("idx", idx.path(), "none");
  CheckConvert("idx", idx.path(), "gzip");
}

TEST(Convert, RealFashionMnistRoundTripsThroughTfRecords) {
  if (!HaveFashionMnist()) GTEST_SKIP() << "Fashion-MNIST not installed in " << kFashionMnistDir;
  CheckConvert("idx", kFashionMnistDir, "gzip");
}

TEST(Convert, CifarRoundTripsThroughTfRecords) {
  TempDir cifar;
  const std::string dir = cifar.path() + "/cifar-10-batches-bin";
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const std::string& name : {std::string("data_batch_1.bin"), std::string("data_batch_2.bin"),
                                  std::string("data_batch_3.bin"), std::string("data_batch_4.bin"),
                                  std::string("data_batch_5.bin"), std::string("test_batch.bin")}) {
    std::string bytes;
    for (int i = 0; i < 4; ++i, ++n) {
      bytes.push_back(static_cast<char>(n % 10));
      for (int j = 0; j < 3072; ++j) bytes.push_back(static_cast<char>((n * 7 + j) % 256));
    }
    WriteFile(dir + "/" + name, bytes, false);
  }
  CheckConvert("cifar", cifar.path(), "none");
  CheckConvert("cifar", cifar.path(), "gzip");
}

TEST(Convert, BadInputExitsOneWithOneLine) {
  TempDir dir;
  const std::string in = dir.path() + "/in", out = dir.path() + "/out";
  std::filesystem::create_directories(in);
  const std::string dirs = " --data_dir=" + in + " --output_dir=" + out;
  struct Case {
    std::string args, message;
  };
  const Case usage[] = {
      {"--input_format=png" + dirs, "--input_format must be idx or cifar, not \"png\""},
      {"--input_format=idx --compression=zip" + dirs, "--compression must be none or gzip"},
      {"--input_format=idx --output_dir=" + out, "--data_dir is required"},
      {"--input_format=idx --data_dir=" + in, "--output_dir is required"},
      {"--input_format=idx" + dirs + " extra", "unexpected argument \"extra\""},
      {"--input_format=idx" + dirs, in + "/train-images-idx3-ubyte[.gz]: no such file"},
      {"--input_format=cifar" + dirs, in + "/data_batch_1.bin"},
  };
  for (const Case& c : usage)
    ExpectBadInput(RunTool("pstrain_convert", c.args, dir.path()), c.message);

  // Damaged inputs: a truncated IDX file, a short CIFAR-10 file, a bad label.
  WriteMnistSplit(in, "train", 3, 2, 2, false);
  WriteMnistSplit(in, "t10k", 3, 2, 2, false);
  WriteFile(in + "/t10k-images-idx3-ubyte", IdxBytes({3, 2, 2}, std::vector<uint8_t>(11)), false);
  ExpectBadInput(RunTool("pstrain_convert", "--input_format=idx" + dirs, dir.path()),
                 in + "/t10k-images-idx3-ubyte: IDX size mismatch");
  std::string record(3073, '\0');
  for (const std::string& name : Cifar10FileNames("train"))
    WriteFile(in + "/" + name, record, false);
  WriteFile(in + "/test_batch.bin", record + record.substr(0, 100), false);
  ExpectBadInput(RunTool("pstrain_convert", "--input_format=cifar" + dirs, dir.path()),
                 in + "/test_batch.bin: 3173 bytes is not a whole number of 3073-byte records: "
                      "record 1 is short (100 of 3073 bytes)");
  record[0] = 11;
  WriteFile(in + "/test_batch.bin", std::string(3073, '\0') + record, false);
  ExpectBadInput(RunTool("pstrain_convert", "--input_format=cifar" + dirs, dir.path()),
                 in + "/test_batch.bin: record 1 has label 11, not in 0..9");
  EXPECT_FALSE(std::filesystem::exists(out));
}

// --help lists the tool's own flags with their defaults, and not glog's
// (which --helpfull adds); it exits 0.
TEST(Tools, HelpListsTheToolsOwnFlags) {
  TempDir dir;
  const std::string out = dir.path() + "/help.txt";
  const int status = std::system((Binary("pstrain_convert") + " --help >" + out + " 2>&1").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string help = ReadBytes(out);
  EXPECT_EQ(help.rfind("pstrain_convert: ", 0), 0u) << help;
  EXPECT_NE(help.find("Flags from tools/convert_main.cc:"), std::string::npos) << help;
  EXPECT_NE(help.find("-input_format (Format of the data set"), std::string::npos) << help;
  EXPECT_EQ(help.find("logtostderr"), std::string::npos) << help;
  EXPECT_EQ(help.find("flagfile"), std::string::npos) << help;
}

}  // namespace
}  // namespace data
}  // namespace pstrain
