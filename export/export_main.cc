// pstrain_export: a trained model out of pstrain, for serving and for
// inspection.
//
//   pstrain_export --model=cifar10 --checkpoint=runs/c/model.ckpt-5000
//       --format=onnx --output=cifar10.onnx --use_moving_averages
//   pstrain_export --model=movielens --checkpoint=runs/m/model.ckpt-900
//       --format=projector --output=runs/m/projector
//
// --format=onnx writes the ONNX model of a dense network (export/onnx_export.h:
// opset 13, input "images" NHWC, outputs "logits" and "probabilities").
// --format=projector writes a model's embedding tables as TSV files with the
// projector_config.pbtxt TensorBoard's projector reads
// (export/projector_export.h). The checkpoint may be pstrain's or one
// TensorFlow wrote. Exit 1, naming the problem, for a model the format does
// not cover, a checkpoint that does not hold the model, or an output that
// cannot be written; an existing output is replaced only by a whole new one.
#include <gflags/gflags.h>
#include <glog/logging.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chief/checkpoint.h"
#include "chief/evaluation.h"
#include "chief/saved_rows.h"
#include "core/atomic_file.h"
#include "core/task_main.h"
#include "export/onnx_export.h"
#include "export/projector_export.h"
#include "nn/model.h"
#include "nn/model_flags.h"
#include "nn/model_spec.h"

DEFINE_string(
    model, "mnist",
    "The checkpoint's network: a built-in one (mnist, mnist_bn, cifar10, mnist_ids, "
    "wide_deep, fasttext, movielens, resnet20, dcn, deepfm, dlrm) or a ModelSpec text file "
    "(proto/model.proto)");
DEFINE_string(checkpoint, "",
              "The checkpoint's prefix, e.g. runs/x/model.ckpt-1200 (pstrain's or TensorFlow's; "
              "required)");
DEFINE_string(format, "onnx",
              "onnx: the ONNX model of a dense network, to --output; projector: the embedding "
              "tables as TensorBoard projector files, into the --output directory");
DEFINE_string(output, "", "The file (onnx) or directory (projector) to write (required)");
DEFINE_bool(use_moving_averages, false,
            "onnx: export the variables' ExponentialMovingAverage shadows (the checkpoint must "
            "hold one for every trainable variable)");

namespace pstrain {
namespace {

Status ExportOnnxFile(const proto::ModelSpec& spec, const nn::Model& model,
                      const Checkpoint& ckpt) {
  bool averaged = false;
  PS_ASSIGN_OR_RETURN(
      std::vector<Tensor> params,
      SelectEvalParams(model, ckpt.tensors, FLAGS_use_moving_averages,
                       FLAGS_checkpoint + " (model " + FLAGS_model + ")", &averaged));
  if (FLAGS_use_moving_averages && !averaged) {
    return InvalidArgument(FLAGS_checkpoint +
                           " holds no ExponentialMovingAverage for every trainable variable; "
                           "export without --use_moving_averages");
  }
  std::map<std::string, Tensor> named;
  for (size_t i = 0; i < params.size(); ++i) {
    named.emplace(model.variables()[i].name, std::move(params[i]));
  }
  PS_ASSIGN_OR_RETURN(onnx::ModelProto onnx_model, ExportOnnx(spec, named));
  onnx_model.set_doc_string("pstrain model " + spec.name() + " from " + FLAGS_checkpoint +
                            " (step " + std::to_string(ckpt.global_step) + ", " +
                            (averaged ? "moving averages" : "variables") + ")");
  std::string bytes;
  if (!onnx_model.SerializeToString(&bytes)) return Internal("the ONNX model does not serialize");
  PS_RETURN_IF_ERROR(WriteFileAtomically(FLAGS_output, bytes));
  LOG(INFO) << "wrote " << FLAGS_output << ": ONNX opset " << kOnnxOpset << ", "
            << onnx_model.graph().node_size() << " nodes, model " << spec.name() << " at step "
            << ckpt.global_step << " (" << (averaged ? "moving averages" : "variables") << ")";
  return OkStatus();
}

Status ExportProjector(const nn::Model& model, const Checkpoint& ckpt) {
  std::vector<proto::EmbeddingTableConfig> tables;
  for (const nn::EmbeddingLookup& lookup : model.lookups()) tables.push_back(lookup.table);
  if (tables.empty()) {
    return InvalidArgument("model " + FLAGS_model + " has no embedding table to export");
  }
  const std::string train_dir = std::filesystem::path(FLAGS_checkpoint).parent_path().string();
  PS_ASSIGN_OR_RETURN(SavedRows rows,
                      SavedRows::Read(ckpt, train_dir.empty() ? "." : train_dir, tables));
  PS_ASSIGN_OR_RETURN(std::vector<int64_t> written,
                      WriteProjectorFiles(FLAGS_output, rows, tables));
  for (size_t i = 0; i < tables.size(); ++i) {
    LOG(INFO) << "wrote " << written[i] << " rows of " << tables[i].name() << " (dim "
              << tables[i].dim() << ") to " << FLAGS_output;
  }
  return OkStatus();
}

Status Run() {
  if (FLAGS_checkpoint.empty()) return InvalidArgument("--checkpoint is required");
  if (FLAGS_output.empty()) return InvalidArgument("--output is required");
  if (FLAGS_format != "onnx" && FLAGS_format != "projector") {
    return InvalidArgument("--format=" + FLAGS_format + ": onnx or projector");
  }
  // As the job loaded it: the data flags (--dim, --data_dir's vocabulary)
  // shape its variables too.
  PS_ASSIGN_OR_RETURN(nn::LoadedModel loaded, nn::LoadModelFromFlags(FLAGS_model));
  const proto::ModelSpec& spec = loaded.spec;
  const std::unique_ptr<nn::Model>& model = loaded.model;
  PS_ASSIGN_OR_RETURN(Checkpoint ckpt, ReadCheckpoint(FLAGS_checkpoint));
  if (FLAGS_format == "onnx") return ExportOnnxFile(spec, *model, ckpt);
  return ExportProjector(*model, ckpt);
}

}  // namespace
}  // namespace pstrain

int main(int argc, char** argv) {
  pstrain::InitToolMain(
      "writes a trained model for serving (ONNX) or its embedding tables for TensorBoard's "
      "projector.\n"
      "  pstrain_export --model=cifar10 --checkpoint=DIR/model.ckpt-5000 --format=onnx "
      "--output=cifar10.onnx --use_moving_averages\n"
      "  pstrain_export --model=movielens --checkpoint=DIR/model.ckpt-900 --format=projector "
      "--output=DIR/projector",
      &argc, &argv);
  return pstrain::RunTool(argc, argv, pstrain::Run);
}
