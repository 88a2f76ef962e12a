#include "data/cifar_dataset.h"

#include <glog/logging.h>
#include <sys/stat.h>

#include "core/atomic_file.h"

namespace pstrain {
namespace data {
namespace {

constexpr int64_t kPlaneBytes = int64_t{kCifarSide} * kCifarSide;

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

std::vector<std::string> Cifar10FileNames(const std::string& split) {
  if (split == "train") {
    return {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin",
            "data_batch_5.bin"};
  }
  if (split == "test") return {"test_batch.bin"};
  return {};
}

StatusOr<std::string> FindCifar10Dir(const std::string& data_dir, const std::string& split) {
  const std::vector<std::string> files = Cifar10FileNames(split);
  if (files.empty()) {
    return InvalidArgument("unknown CIFAR-10 split \"" + split + "\"; expected train or test");
  }
  const std::string nested = data_dir + "/" + kCifarFolder;
  if (IsFile(nested + "/" + files[0])) return nested;
  if (IsFile(data_dir + "/" + files[0])) return data_dir;
  return NotFound("no CIFAR-10 " + split + " split: neither " + nested + "/" + files[0] + " nor " +
                  data_dir + "/" + files[0] + " exists");
}

StatusOr<ImageDataset> ReadCifar10File(const std::string& path) {
  PS_ASSIGN_OR_RETURN(const std::string bytes, ReadFileToString(path));
  const int64_t size = static_cast<int64_t>(bytes.size());
  if (size == 0) return DataLoss(path + ": empty file, no CIFAR-10 records");
  if (size % kCifarRecordBytes != 0) {
    return DataLoss(path + ": " + std::to_string(size) + " bytes is not a whole number of " +
                    std::to_string(kCifarRecordBytes) + "-byte records: record " +
                    std::to_string(size / kCifarRecordBytes) + " is short (" +
                    std::to_string(size % kCifarRecordBytes) + " of " +
                    std::to_string(kCifarRecordBytes) + " bytes)");
  }
  ImageDataset ds;
  ds.count = size / kCifarRecordBytes;
  ds.rows = kCifarSide;
  ds.cols = kCifarSide;
  ds.depth = kCifarDepth;
  ds.pixels.resize(static_cast<size_t>(ds.count * kCifarImageBytes));
  ds.labels.resize(static_cast<size_t>(ds.count));
  for (int64_t r = 0; r < ds.count; ++r) {
    const auto* record = reinterpret_cast<const uint8_t*>(bytes.data()) + r * kCifarRecordBytes;
    if (record[0] >= kCifarClasses) {
      return InvalidArgument(path + ": record " + std::to_string(r) + " has label " +
                             std::to_string(record[0]) + ", not in 0..9");
    }
    ds.labels[r] = record[0];
    uint8_t* hwc = ds.pixels.data() + r * kCifarImageBytes;
    for (int c = 0; c < kCifarDepth; ++c) {
      const uint8_t* plane = record + 1 + c * kPlaneBytes;
      for (int64_t i = 0; i < kPlaneBytes; ++i) hwc[i * kCifarDepth + c] = plane[i];
    }
  }
  return ds;
}

StatusOr<ImageDataset> LoadCifar10Split(const std::string& data_dir, const std::string& split) {
  PS_ASSIGN_OR_RETURN(const std::string dir, FindCifar10Dir(data_dir, split));
  ImageDataset all;
  all.rows = kCifarSide;
  all.cols = kCifarSide;
  all.depth = kCifarDepth;
  for (const std::string& name : Cifar10FileNames(split)) {
    PS_ASSIGN_OR_RETURN(ImageDataset part, ReadCifar10File(dir + "/" + name));
    all.count += part.count;
    all.pixels.insert(all.pixels.end(), part.pixels.begin(), part.pixels.end());
    all.labels.insert(all.labels.end(), part.labels.begin(), part.labels.end());
  }
  return all;
}

void AppendCifar10Record(int label, const uint8_t* hwc, std::string* out) {
  CHECK(label >= 0 && label < kCifarClasses) << "label " << label;
  const size_t start = out->size();
  out->resize(start + kCifarRecordBytes);
  auto* record = reinterpret_cast<uint8_t*>(out->data() + start);
  record[0] = static_cast<uint8_t>(label);
  for (int c = 0; c < kCifarDepth; ++c) {
    uint8_t* plane = record + 1 + c * kPlaneBytes;
    for (int64_t i = 0; i < kPlaneBytes; ++i) plane[i] = hwc[i * kCifarDepth + c];
  }
}

}  // namespace data
}  // namespace pstrain
