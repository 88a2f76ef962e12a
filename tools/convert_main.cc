// pstrain_convert: converts an image data set (MNIST IDX or CIFAR-10 binary)
// to TFRecord files of tf.train.Example, as TensorFlow's
// convert_to_records.py writes them: <output_dir>/train.tfrecords and
// test.tfrecords (".gz" appended with --compression=gzip), one Example per
// image with image_raw (HWC bytes), label, height, width and depth.
// Exits 0 on success, 1 with one line naming the problem otherwise.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "core/task_main.h"
#include "core/tfrecord.h"
#include "data/dataset_loader.h"
#include "data/example_dataset.h"

DEFINE_string(input_format, "", "Format of the data set in --data_dir: idx or cifar.");
DEFINE_string(data_dir, "",
              "Folder of the data set: IDX files (train-images-idx3-ubyte[.gz], t10k-...), or "
              "the CIFAR-10 binaries (data_batch_1..5.bin, test_batch.bin) in it or in its "
              "cifar-10-batches-bin/.");
DEFINE_string(output_dir, "",
              "Folder to write train.tfrecords and test.tfrecords to; created if missing.");
DEFINE_string(compression, "none", "none or gzip (TFRecordOptions GZIP; the files get .gz).");

namespace {

using pstrain::Status;

Status Run() {
  if (FLAGS_input_format != "idx" && FLAGS_input_format != "cifar") {
    return pstrain::InvalidArgument("--input_format must be idx or cifar, not \"" +
                                    FLAGS_input_format + "\"");
  }
  if (FLAGS_compression != "none" && FLAGS_compression != "gzip") {
    return pstrain::InvalidArgument("--compression must be none or gzip, not \"" +
                                    FLAGS_compression + "\"");
  }
  if (FLAGS_data_dir.empty()) return pstrain::InvalidArgument("--data_dir is required");
  if (FLAGS_output_dir.empty()) return pstrain::InvalidArgument("--output_dir is required");
  const bool gzip = FLAGS_compression == "gzip";
  // Read both splits before writing anything.
  PS_ASSIGN_OR_RETURN(const pstrain::data::ImageDataset train,
                      pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_input_format, "train"));
  PS_ASSIGN_OR_RETURN(const pstrain::data::ImageDataset test,
                      pstrain::data::LoadDataset(FLAGS_data_dir, FLAGS_input_format, "test"));
  std::error_code ec;
  std::filesystem::create_directories(FLAGS_output_dir, ec);
  if (ec) return pstrain::Unavailable("cannot create " + FLAGS_output_dir + ": " + ec.message());
  const pstrain::TfRecordCompression compression =
      gzip ? pstrain::TfRecordCompression::kGzip : pstrain::TfRecordCompression::kNone;
  auto write = [&](const std::string& split, const pstrain::data::ImageDataset& ds) {
    const std::string path = FLAGS_output_dir + "/" + split + ".tfrecords" + (gzip ? ".gz" : "");
    PS_RETURN_IF_ERROR(pstrain::data::WriteExampleFile(ds, path, compression));
    LOG(INFO) << "wrote " << ds.count << " examples of " << ds.rows << "x" << ds.cols << "x"
              << ds.depth << " to " << path;
    return pstrain::OkStatus();
  };
  PS_RETURN_IF_ERROR(write("train", train));
  PS_RETURN_IF_ERROR(write("test", test));
  return pstrain::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "pstrain_convert --input_format=idx|cifar --data_dir=DIR --output_dir=DIR "
      "[--compression=none|gzip]\n"
      "Writes the train and test splits of an MNIST IDX or CIFAR-10 binary data set as TFRecord\n"
      "files of tf.train.Example (image_raw, label, height, width, depth), as TensorFlow's\n"
      "convert_to_records.py does: DIR/train.tfrecords and DIR/test.tfrecords, with .gz when\n"
      "gzip-compressed. Exits 1 with one line naming the problem on bad input.",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, Run);
}
