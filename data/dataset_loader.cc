#include "data/dataset_loader.h"

#include <sys/stat.h>

#include <vector>

#include "data/cifar_dataset.h"
#include "data/example_dataset.h"

namespace pstrain {
namespace data {
namespace {

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

Status CheckSplit(const std::string& split) {
  if (split == "train" || split == "test") return OkStatus();
  return InvalidArgument("unknown dataset split \"" + split + "\"; expected train or test");
}

// MNIST's name for the split.
std::string IdxSplit(const std::string& split) { return split == "test" ? "t10k" : split; }

}  // namespace

StatusOr<std::string> FindTfRecordFile(const std::string& data_dir, const std::string& split) {
  const std::string base = data_dir + "/" + split + ".tfrecords";
  if (IsFile(base + ".gz")) return base + ".gz";
  if (IsFile(base)) return base;
  return NotFound(base + "[.gz]: no such file");
}

StatusOr<std::string> DetectDatasetFormat(const std::string& data_dir, const std::string& split) {
  PS_RETURN_IF_ERROR(CheckSplit(split));
  const std::string idx = data_dir + "/" + IdxSplit(split) + "-images-idx3-ubyte";
  const std::string cifar_file = Cifar10FileNames(split)[0];
  const std::string tfrecord = data_dir + "/" + split + ".tfrecords";
  std::vector<std::string> found;
  if (IsFile(idx) || IsFile(idx + ".gz")) found.push_back("idx");
  if (FindCifar10Dir(data_dir, split).ok()) found.push_back("cifar");
  if (IsFile(tfrecord) || IsFile(tfrecord + ".gz")) found.push_back("tfrecord");
  if (found.size() == 1) return found[0];
  if (found.empty()) {
    return NotFound("no " + split + " split in " + data_dir + ": looked for " + idx +
                    "[.gz] (idx), " + data_dir + "/" + kCifarFolder + "/" + cifar_file + " or " +
                    data_dir + "/" + cifar_file + " (cifar), and " + tfrecord + "[.gz] (tfrecord)");
  }
  std::string names;
  for (const std::string& f : found) names += (names.empty() ? "" : ", ") + f;
  return InvalidArgument(data_dir + " holds the " + split + " split in more than one format (" +
                         names + "); name the one to use instead of auto");
}

StatusOr<ImageDataset> LoadDataset(const std::string& data_dir, const std::string& format,
                                   const std::string& split, const ExampleSubset& keep) {
  PS_RETURN_IF_ERROR(CheckSplit(split));
  std::string resolved = format;
  if (format == "auto") {
    PS_ASSIGN_OR_RETURN(resolved, DetectDatasetFormat(data_dir, split));
  }
  if (resolved == "idx") return LoadMnistSplit(data_dir, IdxSplit(split), keep);
  StatusOr<ImageDataset> ds = InvalidArgument("unknown dataset format \"" + format +
                                              "\"; expected auto, idx, cifar or tfrecord");
  if (resolved == "cifar") ds = LoadCifar10Split(data_dir, split);
  if (resolved == "tfrecord") {
    PS_ASSIGN_OR_RETURN(const std::string path, FindTfRecordFile(data_dir, split));
    ds = ReadExampleFile(path);
  }
  if (ds.ok()) {
    KeepFirst(keep.limit, &*ds);
    KeepShard(keep.shard, &*ds);
  }
  return ds;
}

}  // namespace data
}  // namespace pstrain
