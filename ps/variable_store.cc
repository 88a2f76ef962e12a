#include "ps/variable_store.h"

#include <cinttypes>
#include <cstdio>

namespace pstrain {
namespace {

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, v);
  return buf;
}

}  // namespace

Status VariableStore::Initialize(const InitOptions& options,
                                 std::unique_ptr<Optimizer> optimizer,
                                 std::map<std::string, Tensor> values) {
  std::map<std::string, std::unique_ptr<Variable>> vars;
  const size_t num_slots = optimizer->slot_names().size();
  for (auto& [name, value] : values) {
    if (name.empty()) return InvalidArgument("variable with an empty name");
    auto v = std::make_unique<Variable>();
    for (size_t s = 0; s < num_slots; ++s) v->slots.emplace_back(value.shape());
    v->value = std::move(value);
    vars.emplace(name, std::move(v));
  }
  std::unique_lock<std::shared_mutex> lock(mu_);
  variables_ = std::move(vars);
  optimizer_ = std::move(optimizer);
  options_ = options;
  global_step_.store(options.global_step);
  ready_ = true;
  return OkStatus();
}

bool VariableStore::ready() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return ready_;
}

Status VariableStore::CheckPlacement(uint64_t fingerprint) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (!ready_) return FailedPrecondition("variables are not initialized yet");
  if (fingerprint != options_.placement_fingerprint) {
    return FailedPrecondition("placement mismatch: request made under placement " +
                              Hex(fingerprint) + ", this ps holds placement " +
                              Hex(options_.placement_fingerprint) +
                              " (do all tasks use the same cluster spec, model and "
                              "--placement/--min_slice_bytes?)");
  }
  return OkStatus();
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> VariableStore::Read(
    const std::vector<std::string>& names) const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::pair<std::string, Tensor>> out;
  auto copy = [&out](const std::string& name, Variable& v) {
    std::lock_guard<std::mutex> vlock(v.mu);
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

StatusOr<int64_t> VariableStore::ApplyGradients(const std::map<std::string, Tensor>& grads,
                                                bool increment_global_step) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  std::vector<std::pair<Variable*, const Tensor*>> work;
  for (const auto& [name, grad] : grads) {
    auto it = variables_.find(name);
    if (it == variables_.end()) return NotFound("gradient for unknown variable " + name);
    if (it->second->value.shape() != grad.shape()) {
      return InvalidArgument("gradient for " + name + " has shape " + ShapeString(grad.shape()) +
                             ", variable has " + ShapeString(it->second->value.shape()));
    }
    work.emplace_back(it->second.get(), &grad);
  }
  for (auto& [var, grad] : work) {
    std::lock_guard<std::mutex> vlock(var->mu);
    std::vector<float*> slots;
    for (Tensor& s : var->slots) slots.push_back(s.data());
    optimizer_->Apply(var->value.data(), slots, grad->data(), grad->size());
  }
  if (increment_global_step && options_.holds_global_step) return ++global_step_;
  return global_step_.load();
}

bool VariableStore::holds_global_step() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return options_.holds_global_step;
}

uint64_t VariableStore::placement_fingerprint() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return options_.placement_fingerprint;
}

int64_t VariableStore::num_variables() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  return static_cast<int64_t>(variables_.size());
}

int64_t VariableStore::num_bytes() const {
  std::shared_lock<std::shared_mutex> lock(mu_);
  int64_t n = 0;
  for (const auto& [name, v] : variables_) n += v->value.bytes() * (1 + v->slots.size());
  return n;
}

}  // namespace pstrain
