// VariableStore: the variables one ps task holds, with their optimizer slots
// and (on one ps) global_step.
//
// Thread-safe. Pulls and pushes run concurrently on gRPC threads; each
// variable has its own lock, so pushes to different variables proceed in
// parallel and concurrent pushes to one variable are serialized (no update
// is ever lost). Initialize replaces everything and excludes all else.
#ifndef PSTRAIN_PS_VARIABLE_STORE_H_
#define PSTRAIN_PS_VARIABLE_STORE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "core/tensor.h"
#include "ps/optimizer.h"

namespace pstrain {

class VariableStore {
 public:
  struct InitOptions {
    uint64_t placement_fingerprint = 0;
    bool holds_global_step = false;
    int64_t global_step = 0;
  };

  // Replaces every variable with `values` (slots zeroed) and marks the store
  // ready. InvalidArgument for an empty name.
  Status Initialize(const InitOptions& options, std::unique_ptr<Optimizer> optimizer,
                    std::map<std::string, Tensor> values);

  bool ready() const;
  // FailedPrecondition when not initialized or initialized under another
  // placement; the message gives both fingerprints.
  Status CheckPlacement(uint64_t fingerprint) const;

  // Copies of the named variables (every variable when names is empty), in
  // the order asked. NotFound naming the first unknown variable.
  StatusOr<std::vector<std::pair<std::string, Tensor>>> Read(
      const std::vector<std::string>& names) const;

  // Checks every gradient first (known variable, same shape) and applies none
  // when one is wrong; then applies each under its variable's lock. Returns
  // global_step afterwards (incremented once when asked and held here).
  StatusOr<int64_t> ApplyGradients(const std::map<std::string, Tensor>& grads,
                                   bool increment_global_step);

  bool holds_global_step() const;
  int64_t global_step() const { return global_step_.load(); }
  uint64_t placement_fingerprint() const;
  int64_t num_variables() const;
  int64_t num_bytes() const;

 private:
  struct Variable {
    std::mutex mu;  // guards value and slots
    Tensor value;
    std::vector<Tensor> slots;
  };

  mutable std::shared_mutex mu_;  // exclusive for Initialize, shared otherwise
  bool ready_ = false;
  InitOptions options_;
  std::unique_ptr<Optimizer> optimizer_;
  std::map<std::string, std::unique_ptr<Variable>> variables_;
  std::atomic<int64_t> global_step_{0};
};

}  // namespace pstrain

#endif  // PSTRAIN_PS_VARIABLE_STORE_H_
