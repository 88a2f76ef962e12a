#include "nn/model.h"

#include "nn/mnist_bn_model.h"
#include "nn/mnist_model.h"

namespace pstrain {
namespace nn {

StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& name) {
  try {
    if (name == "mnist") return std::unique_ptr<Model>(std::make_unique<MnistModel>());
    if (name == "mnist_bn") return std::unique_ptr<Model>(std::make_unique<MnistBnModel>());
  } catch (const dnnl::error& e) {  // the oneDNN engine could not start
    return Internal("model " + name + ": oneDNN: " + e.what());
  }
  return InvalidArgument("unknown model \"" + name + "\" (known: mnist, mnist_bn)");
}

}  // namespace nn
}  // namespace pstrain
