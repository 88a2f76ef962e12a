// ONNX export of a dense network (ModelSpec layers: conv2d, pooling, LRN,
// batch norm, dropout, flatten, dense, ReLU, channel padding, and in a graph
// add, multiply and concat) for serving with onnxruntime, Triton or any
// runtime of ONNX opset kOnnxOpset.
//
// The graph takes the network's input as pstrain feeds it, "images"
// [batch, H, W, C] float32 (for cifar10 the cropped, standardized image),
// and gives "logits" [batch, classes] and their softmax "probabilities".
// pstrain computes in NHWC with HWIO kernels, as TensorFlow does; ONNX's
// convolutions are NCHW with OIHW kernels, so the graph transposes the
// input once and back before the first flatten, and the kernels are
// transposed at export. Each op reproduces pstrain's inference exactly:
//   - SAME padding as explicit pads, the smaller half before (TF's split);
//   - LRN's alpha multiplied by the window size (ONNX divides the sum of
//     squares by the size, TF does not);
//   - batch norm in inference mode, with the moving statistics;
//   - dropout as an inference-mode Dropout node (the identity).
#ifndef PSTRAIN_EXPORT_ONNX_EXPORT_H_
#define PSTRAIN_EXPORT_ONNX_EXPORT_H_

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <string>

#include "core/status.h"
#include "core/tensor.h"
#include "proto/model.pb.h"

namespace pstrain {

inline constexpr int64_t kOnnxOpset = 13;
inline constexpr int64_t kOnnxIrVersion = 7;  // the IR version of opset 13

// The ONNX model of `spec` with `params` (every variable of the model by its
// name, in TF layouts). InvalidArgument naming the layer for a model that is
// not a dense network (feature columns, embedding layers) and naming the
// variable for one missing from params or of another shape; the model passes
// ONNX's checker.
StatusOr<onnx::ModelProto> ExportOnnx(const proto::ModelSpec& spec,
                                      const std::map<std::string, Tensor>& params);

}  // namespace pstrain

#endif  // PSTRAIN_EXPORT_ONNX_EXPORT_H_
