// GraphModel: a Model built from a ModelSpec (proto/model.proto): a graph of
// layers (nn/layer.h), each reading the outputs of those it names (a chain:
// the one before), ending in logits, with the mean sparse softmax
// cross-entropy plus each variable's weight decay as its loss. A model of
// ids runs its embedding front (nn/sparse/embedding_front.h) first, on the
// CPU, and the graph on its output, whose parts (each embedding layer's)
// the layers may name. An output read by several layers gets the sum of
// their gradients. A graph that is not a chain runs on the CPU.
//
// Thread safety: as Model; layers keep activations between calls, so one
// thread at a time.
#ifndef PSTRAIN_NN_GRAPH_MODEL_H_
#define PSTRAIN_NN_GRAPH_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/backend.h"
#include "nn/graph_topology.h"
#include "nn/layer.h"
#include "nn/model.h"
#include "proto/model.pb.h"

namespace pstrain {
namespace nn {

class GraphModel : public Model {
 public:
  // A part of the input that layers may name: columns [offset, offset +
  // width) of its last axis (an embedding layer's output, a feature
  // column's), [1, 1, width] an example.
  struct InputPart {
    std::string name;
    int64_t offset = 0, width = 0;
  };
  // The outputs of `lookups` side by side from offset 0, each a part named
  // by its layer: how a model of ids lays out its embeddings.
  static std::vector<InputPart> LookupParts(const std::vector<EmbeddingLookup>& lookups);
  // InvalidArgument, as "model NAME: layer LAYER (KIND): problem", for a
  // spec that does not hold together: a layer without a name or kind, a
  // value out of range, an input the layer cannot take, two variables of
  // one name, inputs that do not make a graph (nn/graph_topology.h), or an
  // output that is not [num_classes]. `seed`
  // drives dropout's masks. The layers run on `backend`, or on a CPU
  // backend of their own when it is null.
  static StatusOr<std::unique_ptr<GraphModel>> Create(const proto::ModelSpec& spec,
                                                      uint64_t seed = 0,
                                                      std::unique_ptr<Backend> backend = nullptr);

  // A chain to run inside another model (nn/wide_deep_model.h), on the
  // CPU: as Create, but its last layer may give [1] (num_classes 1), and
  // the caller takes the outputs and gives back their gradient
  // (ChainForward, ChainBackward) rather than a loss; its layers may name
  // `parts` of its input.
  static StatusOr<std::unique_ptr<GraphModel>> CreateChain(
      const proto::ModelSpec& spec, uint64_t seed = 0, const std::vector<InputPart>& parts = {});
  // The last layer's outputs [N, num_classes] for `input`.
  StatusOr<const Tensor*> ChainForward(Mode mode, const std::vector<Tensor>& params,
                                       const Tensor& input);
  // After ChainForward(kTraining) of `input`: each variable's gradient (with
  // its weight decay) and the input's into dinput (skipped when null) from
  // the outputs' gradient; the weight decay's loss.
  StatusOr<double> ChainBackward(const std::vector<Tensor>& params, const Tensor& input,
                                 const Tensor& doutputs, std::vector<Tensor>* grads,
                                 Tensor* dinput);

  const std::string& name() const { return name_; }
  const std::vector<VariableSpec>& variables() const override { return variables_; }
  Shape example_shape() const override { return example_shape_; }
  int num_classes() const override { return num_classes_; }
  std::string backend() const override { return backend_->Describe(); }
  const std::vector<EmbeddingLookup>& lookups() const override { return front_.lookups(); }
  // InvalidArgument, naming the model and layer, unless `ids` is a batch
  // of `batch` examples this model of ids can read (EmbeddingFront::Check).
  Status CheckIds(const SparseInput& ids, int64_t batch) const {
    return front_.Check(ids, batch).Annotate(name_);
  }
  const std::vector<std::string>& dense_columns() const override;
  using Model::Logits;
  using Model::LossAndGradients;
  StatusOr<float> LossAndGradients(const std::vector<Tensor>& params, const ModelInput& input,
                                   const std::vector<int32_t>& labels, std::vector<Tensor>* grads,
                                   std::vector<Tensor>* row_grads, StepHooks* hooks) override;
  StatusOr<Tensor> Logits(const std::vector<Tensor>& params, const ModelInput& input) override;
  // The logits in either mode (training: batch statistics, dropout).
  StatusOr<Tensor> LogitsIn(Mode mode, const std::vector<Tensor>& params, const Tensor& images);
  // On a device backend: leave each step's gradients on the device (in
  // DeviceGradients()) rather than download them into the caller's, who
  // gets them empty; for towers that average them on their devices.
  void KeepGradientsOnDevice() { keep_gradients_on_device_ = true; }
  std::vector<Tensor>* DeviceGradients() { return &device_grads_; }
  Backend* backend_ptr() { return backend_.get(); }
  // Forward FLOPs of one example (multiply-adds count 2), for model_info.
  int64_t ForwardFlopsPerExample() const { return flops_per_example_; }
  // Each layer's name, kind, one example's output shape, what it reads
  // (layers, parts, "input") and its forward FLOPs an example, in run order.
  struct LayerInfo {
    std::string name, kind;
    Shape output;
    std::vector<std::string> inputs;
    int64_t flops = 0;
  };
  // Whether each layer reads just the one before it.
  bool is_chain() const { return topology_.chain; }
  const std::vector<LayerInfo>& layers() const { return layer_info_; }

 private:
  GraphModel() = default;
  static StatusOr<std::unique_ptr<GraphModel>> Create(const proto::ModelSpec& spec, uint64_t seed,
                                                      std::unique_ptr<Backend> backend, bool chain,
                                                      std::vector<InputPart> parts);
  // The layers after the embedding front, wired (topology_) and made in
  // run order, with their variables and the shapes they give.
  Status BuildLayers(const proto::ModelSpec& spec, uint64_t seed);
  // What layer i reads, given the (placed) input: into xs_.
  void GatherInputs(size_t i, const Tensor& input);
  // Where layer i's backward writes the gradient of each input (dxs_), and
  // adds those that several layers read into their sums afterwards.
  void PointInputGradients(size_t i, Tensor* dinput);
  void SumInputGradients(size_t i, Tensor* dinput);
  // Every layer's backward from the outputs' gradient (hooks may be null);
  // the weight decay's loss.
  StatusOr<double> Backward(const std::vector<Tensor>& params, const Tensor& images,
                            const Tensor& dlogits, std::vector<Tensor>* grads, StepHooks* hooks,
                            Tensor* dinput);
  // The chain's loss and gradients on `input` (the images, or the front's
  // output), and the input's gradient into dinput unless it is null.
  StatusOr<float> ChainLossAndGradients(const std::vector<Tensor>& params, const Tensor& input,
                                        const std::vector<int32_t>& labels,
                                        std::vector<Tensor>* grads, StepHooks* hooks,
                                        Tensor* dinput);
  // What the chain reads of `input`: the images, or the front's output
  // for the ids (into front_out_).
  StatusOr<const Tensor*> ChainInput(const ModelInput& input);
  // Runs every layer; with hooks, each layer waits for its variables first.
  Status Forward(Mode mode, const std::vector<Tensor>& params, const Tensor& images,
                 StepHooks* hooks);
  Params LayerParams(size_t layer, const std::vector<Tensor>& params) const;
  // The images and variable v where the kernels want them: the caller's
  // own on the host, else uploaded to the device.
  StatusOr<const Tensor*> PlaceImages(const Tensor& images);
  Status PlaceParam(size_t v, const std::vector<Tensor>& params);

  std::string name_;
  Shape example_shape_;
  int num_classes_ = 0;
  bool sum_loss_ = false;             // LossReduction SUM: the batch's loss summed, not averaged
  std::unique_ptr<Backend> backend_;  // borrowed by the layers
  EmbeddingFront front_;              // empty for a model of images
  Tensor front_out_, dfront_out_;
  std::vector<InputPart> parts_;
  std::vector<bool> part_read_;  // per part: whether a layer reads it
  GraphTopology topology_;
  // The input's gradient goes straight to the caller's: the input is read
  // by one layer and no part of it by any.
  bool input_grad_direct_ = true;
  std::vector<std::unique_ptr<Layer>> layers_;
  std::vector<LayerInfo> layer_info_;
  std::vector<VariableSpec> variables_;
  std::vector<std::vector<size_t>> owned_;  // per layer: its variables' indices
  int64_t flops_per_example_ = 0;

  // Activations of the latest Forward (acts_[i]: layer i's output) and their
  // gradients; kept so each step reuses the buffers.
  std::vector<Tensor> acts_, dacts_;
  Tensor dlogits_;
  std::vector<Tensor> part_acts_;  // each part's columns of the latest input
  // Per layer and input: the gradient its backward gives, where that
  // input's source is read more than once (summed into the source's).
  std::vector<std::vector<Tensor>> edge_grads_;
  std::vector<int> grads_arrived_;  // per layer: its readers' gradients so far
  std::vector<const Tensor*> xs_;
  std::vector<Tensor*> dxs_;
  // A device backend's copies of the step's images, variables and
  // gradients (the gradients are downloaded into the caller's as each is
  // final); empty on the host.
  Tensor device_images_;
  std::vector<Tensor> device_params_, device_grads_;
  bool keep_gradients_on_device_ = false;
};

}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_GRAPH_MODEL_H_
