// Keras models as they are: the JSON config of a Keras model
// (model.to_json(), Keras 2 or 3, Sequential or Functional) made into the
// ModelSpec of the same network, its variables under Keras's names
// ("conv2d/kernel", "batch_normalization/moving_mean"), so that a checkpoint
// TensorFlow saved of the Keras model warm-starts it (chief/warm_start.h).
//
// Layers: InputLayer, Dense, Conv2D, MaxPooling2D, AveragePooling2D,
// BatchNormalization, Dropout, Flatten, Add, Concatenate, Multiply,
// Embedding (of an Input of one id), Activation, ReLU and Softmax; the
// activations linear, relu, sigmoid and tanh, and softmax on the output,
// which the loss applies (the network's output are the logits). A Dense or
// Conv2D's L2 kernel regularizer l2 becomes weight decay 2 * l2 (the same
// term of the loss); Keras's initializers (Glorot, He, LeCun, variance
// scaling, zeros, ones, constant, truncated normal) are kept. A model of
// ids (Inputs read by Embeddings) trains on TFRecords of tf.train.Example in
// --data_dir, train.tfrecord and test.tfrecord: an int64 feature per Input,
// named as the Input, and an int64 "label".
#ifndef PSTRAIN_NN_KERAS_MODEL_H_
#define PSTRAIN_NN_KERAS_MODEL_H_

#include <string>

#include "core/status.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

// The ModelSpec of the Keras model whose JSON is `json`; `source` names it
// in errors. InvalidArgument naming the layer (and the option) for what
// pstrain lacks: another layer class, a non-square kernel, dilation,
// channels_first, a frozen or shared layer, a bias regularizer, a Dense
// reading more than a vector, an output that is not a Dense of two or more
// units; and for JSON that is not a Keras model's.
StatusOr<proto::ModelSpec> ModelSpecFromKerasJson(const std::string& json,
                                                  const std::string& source);

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_KERAS_MODEL_H_
