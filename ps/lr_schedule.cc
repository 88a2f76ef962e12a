#include "ps/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace pstrain {
namespace {

bool IsRate(float r) { return std::isfinite(r) && r >= 0; }

Status Validate(const proto::LrScheduleConfig& c, float learning_rate) {
  switch (c.kind()) {
    case proto::LrScheduleConfig::CONSTANT:
    case proto::LrScheduleConfig::EXPONENTIAL_DECAY:
      if (!IsRate(learning_rate)) {
        return InvalidArgument("learning_rate must be >= 0, got " + std::to_string(learning_rate));
      }
      if (c.kind() == proto::LrScheduleConfig::CONSTANT) return OkStatus();
      if (c.decay_steps() <= 0) {
        return InvalidArgument("exponential_decay: decay_steps must be > 0, got " +
                               std::to_string(c.decay_steps()));
      }
      if (!std::isfinite(c.decay_rate()) || c.decay_rate() <= 0) {
        return InvalidArgument("exponential_decay: decay_rate must be > 0, got " +
                               std::to_string(c.decay_rate()));
      }
      return OkStatus();
    case proto::LrScheduleConfig::POLYNOMIAL_DECAY:
      if (!IsRate(learning_rate) || !IsRate(c.end_learning_rate())) {
        return InvalidArgument(
            "polynomial_decay: learning_rate and end_learning_rate must be >= 0");
      }
      if (c.decay_steps() <= 0) {
        return InvalidArgument("polynomial_decay: decay_steps must be > 0, got " +
                               std::to_string(c.decay_steps()));
      }
      if (!std::isfinite(c.power()) || c.power() <= 0) {
        return InvalidArgument("polynomial_decay: power must be > 0, got " +
                               std::to_string(c.power()));
      }
      return OkStatus();
    case proto::LrScheduleConfig::PIECEWISE_CONSTANT:
      if (c.values_size() != c.boundaries_size() + 1) {
        return InvalidArgument("piecewise_constant: needs one more of values (" +
                               std::to_string(c.values_size()) + ") than of boundaries (" +
                               std::to_string(c.boundaries_size()) + ")");
      }
      for (int i = 1; i < c.boundaries_size(); ++i) {
        if (c.boundaries(i) <= c.boundaries(i - 1)) {
          return InvalidArgument("piecewise_constant: boundaries must be strictly increasing");
        }
      }
      for (float v : c.values()) {
        if (!IsRate(v)) {
          return InvalidArgument("piecewise_constant: values must be >= 0, got " +
                                 std::to_string(v));
        }
      }
      return OkStatus();
    default:
      return InvalidArgument("unknown lr_schedule kind " + std::to_string(c.kind()));
  }
}

}  // namespace

StatusOr<LrSchedule> LrSchedule::Create(const proto::LrScheduleConfig& config,
                                        float learning_rate) {
  PS_RETURN_IF_ERROR(Validate(config, learning_rate));
  return LrSchedule(config, learning_rate);
}

LrSchedule::LrSchedule(const proto::LrScheduleConfig& c, float learning_rate)
    : kind_(c.kind()),
      learning_rate_(learning_rate),
      decay_steps_(c.decay_steps()),
      decay_rate_(c.decay_rate()),
      staircase_(c.staircase()),
      boundaries_(c.boundaries().begin(), c.boundaries().end()),
      values_(c.values().begin(), c.values().end()),
      end_learning_rate_(c.end_learning_rate()),
      power_(c.power()) {}

float LrSchedule::At(int64_t global_step) const {
  switch (kind_) {
    case proto::LrScheduleConfig::EXPONENTIAL_DECAY: {
      double p = static_cast<double>(global_step) / static_cast<double>(decay_steps_);
      if (staircase_) p = std::floor(p);
      return static_cast<float>(learning_rate_ * std::pow(decay_rate_, p));
    }
    case proto::LrScheduleConfig::POLYNOMIAL_DECAY: {
      const double done = static_cast<double>(std::min(global_step, decay_steps_)) /
                          static_cast<double>(decay_steps_);
      return static_cast<float>((learning_rate_ - end_learning_rate_) *
                                    std::pow(1 - done, static_cast<double>(power_)) +
                                end_learning_rate_);
    }
    case proto::LrScheduleConfig::PIECEWISE_CONSTANT: {
      // The first boundary >= global_step ends the interval holding it.
      auto it = std::lower_bound(boundaries_.begin(), boundaries_.end(), global_step);
      return values_[it - boundaries_.begin()];
    }
    default:
      return learning_rate_;
  }
}

}  // namespace pstrain
