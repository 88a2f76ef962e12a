// DenseVariables: one ps task's dense variables with their optimizer slots
// and, when asked, their moving averages (ps/moving_averages.h), updated by
// the optimizer's rule (ps/optimizer.h) at the rate the caller gives.
//
// A non-trainable variable (batch norm's moving statistics) has no slots and
// no shadow; what is pushed for it is an assign_sub delta, applied as
// var -= delta without the optimizer.
//
// Thread contract: the set of variables is fixed when made; any call from
// any thread. Each variable has its own lock: pushes to different variables
// run in parallel, pushes to one are serialized (no update is lost). A
// reader (ReadShared) holds a value no update changes: an update then
// writes a new copy.
#ifndef PSTRAIN_PS_DENSE_VARIABLES_H_
#define PSTRAIN_PS_DENSE_VARIABLES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "core/tensor.h"
#include "ps/moving_averages.h"
#include "ps/optimizer.h"

namespace pstrain {

class DenseVariables {
 public:
  struct Options {
    std::set<std::string> non_trainable;  // names among the values
    int64_t update_count = 0;             // Adam's t so far: the global step
    float ema_decay = 0;                  // > 0: a moving average of each trainable variable
  };
  // The bytes `values` take with their slots and shadows. InvalidArgument
  // for an empty name or a non-trainable name not among them.
  static StatusOr<uint64_t> Footprint(const Options& options, size_t num_slots,
                                      const std::map<std::string, Tensor>& values);
  // The variables of `values`, each slot at the optimizer's initial value
  // and each shadow at its variable's, or at `state`'s saved slot
  // ("<variable>/<slot>") or shadow ("<variable>/ExponentialMovingAverage").
  // InvalidArgument for a saved tensor of another shape, or one that matches
  // no variable, slot or shadow.
  static StatusOr<std::unique_ptr<DenseVariables>> Make(const Options& options,
                                                        std::unique_ptr<Optimizer> optimizer,
                                                        std::map<std::string, Tensor> values,
                                                        std::map<std::string, Tensor> state);

  const Optimizer& optimizer() const { return *optimizer_; }
  int64_t size() const { return static_cast<int64_t>(variables_.size()); }
  bool has(const std::string& name) const { return variables_.count(name) > 0; }
  int64_t bytes() const;

  // OK when a gradient of `name` and `shape` may be pushed; NotFound or
  // InvalidArgument naming the variable.
  Status CheckGradient(const std::string& name, const Shape& shape) const;

  struct Variable;
  // One gradient to apply: its variable, and where the variable's updated
  // value is also written (null: nowhere), such as a worker's memory that
  // the ps maps (PushHeader.arena_rooms).
  struct Update {
    Variable* var;
    const Tensor* grad;
    float* copy_to = nullptr;
  };
  using Work = std::vector<Update>;
  // The variables gradients name, each with its gradient and with its
  // `copies` entry (room for its whole value) if it has one: what Apply
  // takes.
  using ValueCopies = std::map<std::string, float*>;
  StatusOr<Work> Resolve(const std::map<std::string, Tensor>& grads,
                         const ValueCopies& copies = {}) const;
  // Applies each gradient to its variable at rate `lr`, moves its shadow
  // at the decay for global step `produced_step`, and writes the updated
  // value to copy_to, block by block while it is in cache.
  void Apply(const Work& work, float lr, int64_t produced_step);

  using SharedTensor = std::shared_ptr<const Tensor>;
  // The named variables (every one when names is empty), in the order
  // asked, as they are now. NotFound naming the first unknown one.
  StatusOr<std::vector<std::pair<std::string, SharedTensor>>> ReadShared(
      const std::vector<std::string>& names) const;
  // Copies of every variable with its slots and shadow, named as Make's
  // `state` names them.
  std::vector<std::pair<std::string, Tensor>> ReadState() const;

 private:
  // The variable a gradient `name` of `shape` is for; CheckGradient's errors.
  StatusOr<Variable*> TakingGradient(const std::string& name, const Shape& shape) const;
  DenseVariables(std::unique_ptr<Optimizer> optimizer, std::unique_ptr<MovingAverages> averages,
                 std::map<std::string, std::unique_ptr<Variable>> variables);
  const std::unique_ptr<Optimizer> optimizer_;
  const std::unique_ptr<MovingAverages> averages_;  // null without moving averages
  const std::map<std::string, std::unique_ptr<Variable>> variables_;
};

struct DenseVariables::Variable {
  Mutex mu;
  // Set before the variable is shared, never changed.
  bool trainable = true;  // false: pushes are deltas, var -= delta
  Shape shape;
  MovingAverages::Shadow* shadow = nullptr;  // its moving average, if any
  // Copy on write: readers (ReadShared) hold it; an update changes it in
  // place only when no reader does (Writable).
  std::shared_ptr<Tensor> value ABSL_GUARDED_BY(mu);
  std::vector<Tensor> slots ABSL_GUARDED_BY(mu);
  int64_t update_count ABSL_GUARDED_BY(mu) = 0;  // gradients applied, Optimizer::Apply's count
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_DENSE_VARIABLES_H_
