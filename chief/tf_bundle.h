// TensorFlow's V2 checkpoint format, a "tensor bundle", written and read:
//   PREFIX.index                 a table in LevelDB's format (uncompressed,
//                                keys in byte order): key "" holds a
//                                BundleHeaderProto, each tensor's name its
//                                BundleEntryProto (proto/tensor_bundle.proto:
//                                dtype, shape, offset and size of its bytes,
//                                their masked CRC32C)
//   PREFIX.data-00000-of-00001   the tensors' little-endian bytes, back to back
// as tf.train.Saver and tf.train.Checkpoint write them, so that
// tf.train.load_checkpoint reads what pstrain writes and pstrain what
// TensorFlow wrote. Tensors of float32 and int64; strings are read (a TF 2
// checkpoint's object graph), not written.
//
// The data file is committed before the index, each through AtomicFile
// (temporary name, fsync, rename): a bundle is visible, and whole, once its
// index is.
#ifndef PSTRAIN_CHIEF_TF_BUNDLE_H_
#define PSTRAIN_CHIEF_TF_BUNDLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "core/file_ops.h"
#include "core/status.h"
#include "core/tensor.h"
#include "proto/tensor_bundle.pb.h"

namespace pstrain {

std::string TfBundleIndexPath(const std::string& prefix);
std::string TfBundleDataPath(const std::string& prefix);

// One tensor of a bundle: float32 values in `floats`, int64 ones in
// `int64s`, or strings in `strings`.
struct BundleTensor {
  tensorflow::DataType dtype = tensorflow::DT_INVALID;
  Shape shape;
  Tensor floats;
  std::vector<int64_t> int64s;
  std::vector<std::string> strings;
};

// Thread-compatible.
class TfBundleWriter {
 public:
  // Writes every file through `ops`.
  static StatusOr<std::unique_ptr<TfBundleWriter>> Create(const std::string& prefix,
                                                          FileOps* ops = FileOps::Real());

  // InvalidArgument for a name given twice or empty (the header's key), or
  // int64 values that are not the shape's number.
  Status AddFloat(const std::string& name, const Tensor& tensor);
  Status AddInt64(const std::string& name, const Shape& shape, const std::vector<int64_t>& values);
  // A tensor written in parts, straight to the data file, whose shape is
  // known at its end (an embedding table's keys or values, streamed block
  // by block): Begin, any number of Appends, End. No other tensor may be
  // added in between. End: InvalidArgument unless the bytes appended are
  // the shape's.
  Status BeginTensor(const std::string& name, tensorflow::DataType dtype);
  Status AppendToTensor(const void* bytes, size_t n);
  Status EndTensor(const Shape& shape);
  // Where the next tensor will start in the data file.
  uint64_t offset() const { return static_cast<uint64_t>(offset_); }
  // Commits the data, then the index.
  Status Finish();

 private:
  TfBundleWriter(std::string prefix, std::unique_ptr<AtomicFile> data, FileOps* ops);
  Status AddBytes(const std::string& name, tensorflow::DataType dtype, const Shape& shape,
                  const void* bytes, size_t n);

  const std::string prefix_;
  std::unique_ptr<AtomicFile> data_;
  FileOps* const ops_;
  int64_t offset_ = 0;
  std::map<std::string, tensorflow::BundleEntryProto> entries_;  // in key order
  // The tensor being streamed (BeginTensor) and its CRC32C so far.
  tensorflow::BundleEntryProto* streaming_ = nullptr;
  uint32_t streaming_crc_ = 0;
};

// Every tensor of the bundle at `prefix` but those `skip` (may be null)
// names, whose entries are checked but whose bytes are not read (an
// embedding table's keys and values, which pstrain restores from its rows
// file). NotFound when its index is absent; DataLoss naming the file (and
// the tensor) for an index that is not such a table or lacks the header, an entry whose bytes lie
// outside the data file or fail their CRC32C; Unimplemented for what pstrain does not read (several
// data shards, sliced variables, big-endian bytes, dtypes other than float32, int64 and string),
// naming the tensor.
StatusOr<std::map<std::string, BundleTensor>> ReadTfBundle(
    const std::string& prefix, const std::function<bool(const std::string&)>& skip = nullptr);

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_TF_BUNDLE_H_
