// What a weighted layer calls its variables, under "<layer name>/", in a
// spec's naming (proto::VariableNaming): TensorFlow 1.x layers' or Keras's.
// One place, so the layers, the embedding front and the exporters agree.
#ifndef PSTRAIN_NN_VARIABLE_NAMES_H_
#define PSTRAIN_NN_VARIABLE_NAMES_H_

#include <string>

#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// A dense or conv2d layer's weights: "weights", Keras's "kernel".
inline std::string KernelName(const std::string& layer, proto::VariableNaming naming) {
  return layer + (naming == proto::KERAS ? "/kernel" : "/weights");
}

// Its biases: "biases", Keras's "bias".
inline std::string BiasName(const std::string& layer, proto::VariableNaming naming) {
  return layer + (naming == proto::KERAS ? "/bias" : "/biases");
}

// An embedding layer's table: "embedding_weights", Keras's "embeddings".
inline std::string EmbeddingsName(const std::string& layer, proto::VariableNaming naming) {
  return layer + (naming == proto::KERAS ? "/embeddings" : "/embedding_weights");
}

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_VARIABLE_NAMES_H_
