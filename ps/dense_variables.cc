#include "ps/dense_variables.h"

#include <algorithm>
#include <cstring>

#include "core/flush_denormals.h"
#include "core/halves.h"

namespace pstrain {
namespace {

// Floats of a variable updated at a time when its value is copied out:
// with the same ranges of its gradient and slots, well inside a core's L2.
constexpr int64_t kCopyBlockElements = int64_t{1} << 14;

// The variable's value, to update: a copy when a reader still holds it.
Tensor& Writable(DenseVariables::Variable* v) ABSL_EXCLUSIVE_LOCKS_REQUIRED(v->mu) {
  // Every copy of the pointer is made under v->mu, which the caller holds:
  // a count of one means no reader can see the change.
  if (v->value.use_count() > 1) v->value = std::make_shared<Tensor>(*v->value);
  return *v->value;
}

}  // namespace

DenseVariables::DenseVariables(std::unique_ptr<Optimizer> optimizer,
                               std::unique_ptr<MovingAverages> averages,
                               std::map<std::string, std::unique_ptr<Variable>> variables)
    : optimizer_(std::move(optimizer)),
      averages_(std::move(averages)),
      variables_(std::move(variables)) {}

StatusOr<uint64_t> DenseVariables::Footprint(const Options& options, size_t num_slots,
                                             const std::map<std::string, Tensor>& values) {
  for (const std::string& name : options.non_trainable) {
    if (!values.count(name)) {
      return InvalidArgument("non-trainable " + name + " is not a variable on this ps");
    }
  }
  uint64_t footprint = 0;
  for (const auto& [name, value] : values) {
    if (name.empty()) return InvalidArgument("variable with an empty name");
    const bool trainable = !options.non_trainable.count(name);
    const uint64_t copies = 1 + (trainable ? num_slots + (options.ema_decay > 0 ? 1 : 0) : 0);
    footprint += copies * value.bytes();
  }
  return footprint;
}

StatusOr<std::unique_ptr<DenseVariables>> DenseVariables::Make(
    const Options& options, std::unique_ptr<Optimizer> optimizer,
    std::map<std::string, Tensor> values, std::map<std::string, Tensor> state) {
  const std::vector<std::string> slot_names = optimizer->slot_names();
  auto averages =
      options.ema_decay > 0 ? std::make_unique<MovingAverages>(options.ema_decay) : nullptr;
  std::map<std::string, std::unique_ptr<Variable>> vars;
  for (auto& [name, value] : values) {
    auto v = std::make_unique<Variable>();
    MutexLock vlock(&v->mu);  // no one else sees it yet; the analysis does not know
    v->trainable = !options.non_trainable.count(name);
    v->shape = value.shape();
    for (size_t s = 0; v->trainable && s < slot_names.size(); ++s) {
      Tensor slot(value.shape());
      slot.Fill(optimizer->slot_initial_value(static_cast<int>(s)));
      auto saved = state.find(name + "/" + slot_names[s]);
      if (saved != state.end()) {
        if (saved->second.shape() != value.shape()) {
          return InvalidArgument("saved " + saved->first + " has shape " +
                                 ShapeString(saved->second.shape()) + ", variable has " +
                                 ShapeString(value.shape()));
        }
        slot = std::move(saved->second);
        state.erase(saved);
      }
      v->slots.push_back(std::move(slot));
    }
    if (v->trainable && averages) {
      PS_ASSIGN_OR_RETURN(v->shadow, averages->Add(name, value, &state));
    }
    v->update_count = options.update_count;
    v->value = std::make_shared<Tensor>(std::move(value));
    vars.emplace(name, std::move(v));
  }
  if (!state.empty()) {
    return InvalidArgument("saved tensor " + state.begin()->first +
                           " matches no variable, slot or shadow on this ps");
  }
  return std::unique_ptr<DenseVariables>(
      new DenseVariables(std::move(optimizer), std::move(averages), std::move(vars)));
}

StatusOr<DenseVariables::Variable*> DenseVariables::TakingGradient(const std::string& name,
                                                                   const Shape& shape) const {
  auto it = variables_.find(name);
  if (it == variables_.end()) return NotFound("gradient for unknown variable " + name);
  if (it->second->shape != shape) {
    return InvalidArgument("gradient for " + name + " has shape " + ShapeString(shape) +
                           ", variable has " + ShapeString(it->second->shape));
  }
  return it->second.get();
}

Status DenseVariables::CheckGradient(const std::string& name, const Shape& shape) const {
  return TakingGradient(name, shape).status();
}

StatusOr<DenseVariables::Work> DenseVariables::Resolve(const std::map<std::string, Tensor>& grads,
                                                       const ValueCopies& copies) const {
  Work work;
  for (const auto& [name, grad] : grads) {
    PS_ASSIGN_OR_RETURN(Variable * v, TakingGradient(name, grad.shape()));
    const auto copy = copies.find(name);
    work.push_back({v, &grad, copy == copies.end() ? nullptr : copy->second});
  }
  return work;
}

void DenseVariables::Apply(const Work& work, float lr, int64_t produced_step) {
  ScopedFlushDenormals flush;  // as TensorFlow's update ops run
  // TF applies the averages after the step's update, with num_updates the
  // global_step that update produced.
  const float decay = averages_ ? averages_->DecayAt(produced_step) : 0;
  for (const Update& u : work) {
    Variable* const var = u.var;
    const Tensor* const grad = u.grad;
    MutexLock vlock(&var->mu);
    Tensor& updated = Writable(var);
    if (!var->trainable) {
      float* value = updated.data();
      const float* delta = grad->data();
      for (int64_t i = 0; i < updated.size(); ++i) value[i] -= delta[i];
      if (u.copy_to != nullptr) std::memcpy(u.copy_to, value, updated.bytes());
      continue;
    }
    const int64_t count = ++var->update_count;
    // Every update rule is element by element: a range of the variable at a
    // time, with its slots' and shadow's same range, on this thread and
    // another while this one holds the locks. A worker waits for its push
    // to be applied: a big variable's update (mnist's local3 holds 3.2 M of
    // its 3.3 M parameters) goes faster on two cores than on one.
    std::vector<Tensor>* const var_slots = &var->slots;
    auto apply = [&](float* shadow) {
      RunInHalves(grad->size(), kSplitElements, [&](int64_t begin, int64_t end) {
        ScopedFlushDenormals flush_here;  // on the second thread too
        std::vector<float*> slots(var_slots->size());
        // With a copy to write, a block at a time: each block is copied
        // out of the cache its update just wrote, not read again from
        // memory (as a pull after the push reads it).
        const int64_t block = u.copy_to != nullptr ? kCopyBlockElements : end - begin;
        for (int64_t b = begin; b < end; b += block) {
          const int64_t e = std::min(end, b + block);
          for (size_t k = 0; k < slots.size(); ++k) slots[k] = (*var_slots)[k].data() + b;
          optimizer_->Apply(updated.data() + b, slots, grad->data() + b, e - b, lr, count);
          if (shadow != nullptr) {
            MovingAverages::Update(shadow + b, updated.data() + b, e - b, decay);
          }
          if (u.copy_to != nullptr) {
            std::memcpy(u.copy_to + b, updated.data() + b, (e - b) * sizeof(float));
          }
        }
      });
    };
    if (var->shadow == nullptr) {
      apply(nullptr);
      continue;
    }
    MutexLock slock(&var->shadow->mu);
    apply(var->shadow->value.data());
  }
}

StatusOr<std::vector<std::pair<std::string, DenseVariables::SharedTensor>>>
DenseVariables::ReadShared(const std::vector<std::string>& names) const {
  std::vector<std::pair<std::string, SharedTensor>> out;
  auto copy = [&out](const std::string& name, Variable& v) {
    MutexLock vlock(&v.mu);
    out.emplace_back(name, v.value);
  };
  if (names.empty()) {
    for (auto& [name, v] : variables_) copy(name, *v);
    return out;
  }
  for (const std::string& name : names) {
    auto it = variables_.find(name);
    if (it == variables_.end()) return NotFound("no variable " + name + " on this ps");
    copy(name, *it->second);
  }
  return out;
}

std::vector<std::pair<std::string, Tensor>> DenseVariables::ReadState() const {
  const std::vector<std::string> slot_names = optimizer_->slot_names();
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, v] : variables_) {
    {
      MutexLock vlock(&v->mu);
      out.emplace_back(name, *v->value);
      for (size_t s = 0; s < v->slots.size(); ++s) {
        out.emplace_back(name + "/" + slot_names[s], v->slots[s]);
      }
    }
    if (v->shadow != nullptr) {
      MutexLock slock(&v->shadow->mu);
      out.emplace_back(name + "/" + MovingAverages::kSuffix, v->shadow->value);
    }
  }
  return out;
}

int64_t DenseVariables::bytes() const {
  int64_t n = 0;
  for (const auto& [name, v] : variables_) {
    MutexLock vlock(&v->mu);
    n += v->value->bytes() * (1 + v->slots.size());
  }
  return n;
}

}  // namespace pstrain
