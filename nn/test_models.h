// Networks small enough for unit tests of the code around a model (the
// trainer, the supervisor): milliseconds per step.
#ifndef PSTRAIN_NN_TEST_MODELS_H_
#define PSTRAIN_NN_TEST_MODELS_H_

#include <string>

namespace pstrain {
namespace nn {

// ModelSpec text of a linear classifier of 4x4 gray images into 10 classes:
// logits/weights [16,10] (truncated normal 0.1) and logits/biases [10]
// (constant `bias`).
inline std::string TinyLinearNetText(float bias) {
  return R"pbtxt(
    name: "tiny" input_shape: [4, 4, 1] num_classes: 10
    layer { name: "flat" flatten {} }
    layer {
      name: "logits"
      dense {
        units: 10
        weights_initializer { truncated_normal_stddev: 0.1 }
        biases_initializer { constant: )pbtxt" +
         std::to_string(bias) + R"pbtxt( }
      }
    }
  )pbtxt";
}

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_TEST_MODELS_H_
