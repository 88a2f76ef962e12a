#include "ps/moving_averages.h"

#include "ps/update_rules.h"

namespace pstrain {

StatusOr<MovingAverages::Shadow*> MovingAverages::Add(const std::string& name, const Tensor& value,
                                                      std::map<std::string, Tensor>* state) {
  auto shadow = std::make_unique<Shadow>();
  MutexLock lock(&shadow->mu);  // no one else sees it yet; the analysis does not know
  auto saved = state->find(name + "/" + kSuffix);
  if (saved == state->end()) {
    shadow->value = value;  // TF starts a shadow at the variable's value
  } else if (saved->second.shape() != value.shape()) {
    return InvalidArgument("saved " + saved->first + " has shape " +
                           ShapeString(saved->second.shape()) + ", variable has " +
                           ShapeString(value.shape()));
  } else {
    shadow->value = std::move(saved->second);
    state->erase(saved);
  }
  Shadow* const out = shadow.get();
  shadows_[name] = std::move(shadow);
  return out;
}

float MovingAverages::DecayAt(int64_t n) const { return EmaDecay(decay_, n); }

void MovingAverages::Update(float* shadow, const float* value, int64_t n, float d) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) EmaUpdate(&shadow[i], value[i], d);
}

}  // namespace pstrain
