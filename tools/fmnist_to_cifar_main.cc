// pstrain_fmnist_to_cifar: writes Fashion-MNIST in the CIFAR-10 binary
// layout, so the cifar10 model's input path can train on it where CIFAR-10
// itself is not at hand. Into <output_dir>/cifar-10-batches-bin/:
//   data_batch_1.bin .. data_batch_5.bin  training images 0..49999 in order,
//                                         10,000 per file (the last 10,000
//                                         of Fashion-MNIST's 60,000 are left out)
//   test_batch.bin                        test images 0..9999
//   batches.meta.txt                      the 10 class names, one per line
// Each 28x28 gray image is padded with zeros to 32x32 (2 pixels on every
// side) and its plane repeated for R, G and B. Every file is written to a
// temporary name and renamed into place. Exits 0 on success, 1 with one line
// naming the problem otherwise.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "core/atomic_file.h"
#include "core/task_main.h"
#include "data/cifar_dataset.h"
#include "data/mnist_dataset.h"

DEFINE_string(data_dir, "/usr/share/datasets/fashion-mnist",
              "Folder of Fashion-MNIST's IDX files (train-images-idx3-ubyte[.gz], t10k-...); the "
              "default is where Debian's dataset-fashion-mnist package installs them.");
DEFINE_string(output_dir, "", "Folder to create cifar-10-batches-bin/ in.");

namespace {

using pstrain::Status;
using pstrain::data::ImageDataset;

constexpr int kSide = 28;
constexpr int kPad = (pstrain::data::kCifarSide - kSide) / 2;  // 2
constexpr int64_t kPerFile = 10000;
constexpr int kTrainFiles = 5;

const char* const kClassNames[] = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                   "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};

// The CIFAR-10 records of images [begin, begin + kPerFile) of `ds`.
std::string Records(const ImageDataset& ds, int64_t begin) {
  constexpr int kOut = pstrain::data::kCifarSide;
  std::vector<uint8_t> hwc(pstrain::data::kCifarImageBytes);
  std::string bytes;
  bytes.reserve(kPerFile * pstrain::data::kCifarRecordBytes);
  for (int64_t i = begin; i < begin + kPerFile; ++i) {
    const uint8_t* gray = ds.pixels.data() + i * ds.image_size();
    std::fill(hwc.begin(), hwc.end(), 0);
    for (int y = 0; y < kSide; ++y) {
      for (int x = 0; x < kSide; ++x) {
        uint8_t* pixel = &hwc[((y + kPad) * kOut + (x + kPad)) * pstrain::data::kCifarDepth];
        pixel[0] = pixel[1] = pixel[2] = gray[y * kSide + x];
      }
    }
    pstrain::data::AppendCifar10Record(ds.labels[i], hwc.data(), &bytes);
  }
  return bytes;
}

Status CheckSplit(const ImageDataset& ds, const std::string& name, int64_t needed) {
  if (ds.rows != kSide || ds.cols != kSide || ds.depth != 1) {
    return pstrain::InvalidArgument(FLAGS_data_dir + ": " + name + " images are " +
                                    std::to_string(ds.rows) + "x" + std::to_string(ds.cols) + "x" +
                                    std::to_string(ds.depth) + ", expected 28x28x1");
  }
  if (ds.count < needed) {
    return pstrain::InvalidArgument(FLAGS_data_dir + ": " + name + " holds " +
                                    std::to_string(ds.count) + " images, fewer than the " +
                                    std::to_string(needed) + " needed");
  }
  return pstrain::OkStatus();
}

Status Run() {
  if (FLAGS_output_dir.empty()) return pstrain::InvalidArgument("--output_dir is required");
  PS_ASSIGN_OR_RETURN(const ImageDataset train,
                      pstrain::data::LoadMnistSplit(FLAGS_data_dir, "train"));
  PS_ASSIGN_OR_RETURN(const ImageDataset test,
                      pstrain::data::LoadMnistSplit(FLAGS_data_dir, "t10k"));
  PS_RETURN_IF_ERROR(CheckSplit(train, "train", kTrainFiles * kPerFile));
  PS_RETURN_IF_ERROR(CheckSplit(test, "t10k", kPerFile));
  const std::string dir = FLAGS_output_dir + "/" + pstrain::data::kCifarFolder;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return pstrain::Unavailable("cannot create " + dir + ": " + ec.message());
  for (int f = 0; f < kTrainFiles; ++f) {
    const std::string path = dir + "/data_batch_" + std::to_string(f + 1) + ".bin";
    PS_RETURN_IF_ERROR(pstrain::WriteFileAtomically(path, Records(train, f * kPerFile)));
  }
  PS_RETURN_IF_ERROR(pstrain::WriteFileAtomically(dir + "/test_batch.bin", Records(test, 0)));
  std::string names;
  for (const char* name : kClassNames) names += std::string(name) + "\n";
  PS_RETURN_IF_ERROR(pstrain::WriteFileAtomically(dir + "/batches.meta.txt", names));
  LOG(INFO) << "wrote " << dir << ": " << kTrainFiles * kPerFile << " of " << train.count
            << " training images in data_batch_1..5.bin, " << kPerFile << " of " << test.count
            << " test images in test_batch.bin";
  return pstrain::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "pstrain_fmnist_to_cifar [--data_dir=DIR] --output_dir=DIR\n"
      "Writes Fashion-MNIST in the CIFAR-10 binary layout into DIR/cifar-10-batches-bin/:\n"
      "data_batch_1..5.bin (training images 0..49999, 10,000 per file, in order),\n"
      "test_batch.bin (10,000 test images) and batches.meta.txt (the class names). Each 28x28\n"
      "image is padded with zeros to 32x32 and repeated for R, G and B. Exits 1 with one line\n"
      "naming the problem on bad input.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, Run);
}
