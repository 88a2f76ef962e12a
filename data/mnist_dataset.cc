#include "data/mnist_dataset.h"

#include <glog/logging.h>
#include <sys/stat.h>

#include <cstring>

#include "data/idx_reader.h"

namespace pstrain {
namespace data {
namespace {

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// `base`.gz if it exists, else `base`; NotFound if neither does.
StatusOr<std::string> FindIdxFile(const std::string& base) {
  if (FileExists(base + ".gz")) return base + ".gz";
  if (FileExists(base)) return base;
  return NotFound(base + "[.gz]: no such file");
}

}  // namespace

StatusOr<ImageDataset> LoadMnistSplit(const std::string& data_dir, const std::string& split,
                                      const ExampleSubset& keep) {
  if (split != "train" && split != "t10k") {
    return InvalidArgument("unknown MNIST split \"" + split + "\"; expected train or t10k");
  }
  const std::string prefix = data_dir + "/" + split;
  PS_ASSIGN_OR_RETURN(std::string images_path, FindIdxFile(prefix + "-images-idx3-ubyte"));
  PS_ASSIGN_OR_RETURN(std::string labels_path, FindIdxFile(prefix + "-labels-idx1-ubyte"));
  PS_ASSIGN_OR_RETURN(IdxArray images, ReadIdxFile(images_path, keep));
  PS_ASSIGN_OR_RETURN(IdxArray labels, ReadIdxFile(labels_path, keep));
  if (images.dims.size() != 3) {
    return InvalidArgument(images_path + ": images have shape " + ShapeString(images.dims) +
                           ", expected [count,rows,cols]");
  }
  if (labels.dims.size() != 1) {
    return InvalidArgument(labels_path + ": labels have shape " + ShapeString(labels.dims) +
                           ", expected [count]");
  }
  if (images.items_in_file != labels.items_in_file) {
    return InvalidArgument(images_path + " holds " + std::to_string(images.items_in_file) +
                           " images but " + labels_path + " holds " +
                           std::to_string(labels.items_in_file) + " labels");
  }
  ImageDataset ds;
  ds.count = images.dims[0];
  ds.rows = static_cast<int>(images.dims[1]);
  ds.cols = static_cast<int>(images.dims[2]);
  ds.pixels = std::move(images.values);
  ds.labels.reserve(ds.count);
  for (int64_t i = 0; i < ds.count; ++i) {
    if (labels.values[i] >= 10) {
      return InvalidArgument(labels_path + ": label " + std::to_string(labels.values[i]) +
                             " of example " + std::to_string(keep.SplitIndex(i)) +
                             " is not in 0..9");
    }
    ds.labels.push_back(labels.values[i]);
  }
  ds.shard = keep.shard;
  return ds;
}

void NormalizeImage(const ImageDataset& ds, int64_t index, float* dst) {
  CHECK(index >= 0 && index < ds.count) << "image " << index << " of " << ds.count;
  const int64_t pixels = ds.image_size();
  const uint8_t* src = ds.pixels.data() + index * pixels;
  for (int64_t i = 0; i < pixels; ++i) dst[i] = src[i] / 255.0f - 0.5f;
}

void NormalizeImages(const ImageDataset& ds, int64_t begin, int64_t count, Tensor* out) {
  CHECK(begin >= 0 && count >= 0 && begin + count <= ds.count)
      << "images [" << begin << ", " << begin + count << ") of " << ds.count;
  const Shape shape = {count, ds.rows, ds.cols, ds.depth};
  if (out->size() == NumElements(shape)) {
    out->Reshape(shape);
  } else {
    *out = Tensor(shape);
  }
  const int64_t pixels = ds.image_size();
  for (int64_t i = 0; i < count; ++i) NormalizeImage(ds, begin + i, out->data() + i * pixels);
}

void KeepFirst(int64_t n, ImageDataset* ds) {
  if (n <= 0 || n >= ds->count) return;
  ds->count = n;
  ds->pixels.resize(static_cast<size_t>(n * ds->image_size()));
  ds->labels.resize(static_cast<size_t>(n));
  ds->pixels.shrink_to_fit();
  ds->labels.shrink_to_fit();
}

void KeepShard(const Shard& shard, ImageDataset* ds) {
  if (shard.whole() || !ds->shard.whole()) return;
  const int64_t size = ds->image_size();
  int64_t kept = 0;
  for (int64_t i = shard.index; i < ds->count; i += shard.num_shards, ++kept) {
    std::memmove(ds->pixels.data() + kept * size, ds->pixels.data() + i * size,
                 static_cast<size_t>(size));
    ds->labels[static_cast<size_t>(kept)] = ds->labels[static_cast<size_t>(i)];
  }
  ds->count = kept;
  ds->pixels.resize(static_cast<size_t>(kept * size));
  ds->labels.resize(static_cast<size_t>(kept));
  ds->pixels.shrink_to_fit();
  ds->labels.shrink_to_fit();
  ds->shard = shard;
}

}  // namespace data
}  // namespace pstrain
