// TrainingSummaries: what the chief writes for TensorBoard in the train dir
// (events.out.tfevents.TIME.HOST): scalars (loss, learning rate,
// global_step/sec, examples/sec, accuracy), histograms of every variable and
// of its gradient on a training batch, and an image summary of input images.
//
// Thread-compatible: the supervisor calls it from one thread.
#ifndef PSTRAIN_CHIEF_TRAINING_SUMMARIES_H_
#define PSTRAIN_CHIEF_TRAINING_SUMMARIES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "chief/evaluation.h"
#include "chief/summary/event_writer.h"
#include "core/status.h"
#include "core/tensor.h"
#include "data/mnist_dataset.h"
#include "nn/model.h"

namespace pstrain {

class TrainingSummaries {
 public:
  // Borrows model and train_set (the images the gradient histograms, prepared
  // as `input` says, and the image summary use).
  static StatusOr<std::unique_ptr<TrainingSummaries>> Create(const std::string& train_dir,
                                                             nn::Model* model,
                                                             const data::ImageDataset* train_set,
                                                             const ImageInput& input);

  // loss: the workers' mean latest loss; 0 when none has reported one, and
  // then no loss scalar is written.
  Status Scalars(int64_t step, double loss, double learning_rate, double steps_per_sec,
                 double examples_per_sec);
  // An embedding table's shard on one ps: "<table>/ps_<P>/rows", "/bytes",
  // "/admitted" and "/expired".
  Status TableShard(int64_t step, const std::string& table, int ps, int64_t rows, int64_t bytes,
                    int64_t admitted, int64_t expired);
  // Histograms "<variable>" and "<variable>/gradient", the gradient taken on
  // a batch of training images at `params` (a model of ids or columns, or a
  // summary without training images: the variables alone).
  Status Histograms(int64_t step, const std::vector<Tensor>& params);
  // Three training images, "input/image/0..2".
  Status InputImages(int64_t step);
  Status Accuracy(int64_t step, const std::string& tag, double accuracy);
  Status Flush() { return writer_->Flush(); }
  const std::string& path() const { return writer_->path(); }

 private:
  TrainingSummaries(std::unique_ptr<EventWriter> writer, nn::Model* model,
                    const data::ImageDataset* train_set, const ImageInput& input);

  std::unique_ptr<EventWriter> writer_;
  nn::Model* const model_;
  const data::ImageDataset* const train_set_;
  const ImageInput input_;
  int64_t next_batch_ = 0;  // rotates through the training set
};

}  // namespace pstrain

#endif  // PSTRAIN_CHIEF_TRAINING_SUMMARIES_H_
