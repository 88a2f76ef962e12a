#include "worker/tower_choice.h"

namespace pstrain {

StatusOr<TowerChoice> ChooseTowers(int num_towers, int num_gpus, const nn::GpuProbe& probe) {
  if (num_towers < 1 || num_towers > 64) return InvalidArgument("--num_towers must be in [1, 64]");
  if (num_gpus < 0 || num_gpus > 64) return InvalidArgument("--num_gpus must be in [0, 64]");
  if (num_gpus > 0 && num_towers > 1) {
    return InvalidArgument("--num_gpus=" + std::to_string(num_gpus) +
                           " and --num_towers=" + std::to_string(num_towers) +
                           ": give one of them (a tower per GPU, or towers on the CPU)");
  }
  TowerChoice choice;
  if (num_gpus == 0) {
    choice.towers = num_towers;
    choice.why = num_towers == 1 ? "one tower on the CPU"
                                 : std::to_string(num_towers) + " towers on the CPU (--num_towers)";
    return choice;
  }
  const int found = static_cast<int>(probe.devices.size());
  if (found == 0) {
    choice.towers = num_gpus;
    choice.why = "--num_gpus=" + std::to_string(num_gpus) + " but no GPU here (" + probe.why_none +
                 "): " + std::to_string(num_gpus) + (num_gpus == 1 ? " tower" : " towers") +
                 " on the CPU instead";
    return choice;
  }
  if (num_gpus > found) {
    return InvalidArgument("--num_gpus=" + std::to_string(num_gpus) + " but this host has " +
                           std::to_string(found) + " GPU" + (found == 1 ? "" : "s") + " (first " +
                           probe.devices[0] + ")");
  }
  choice.towers = num_gpus;
  choice.devices = nn::TowerDevices::kGpus;
  choice.why = "a tower on each of " + std::to_string(num_gpus) + " GPU" +
               (num_gpus == 1 ? "" : "s") + " (first " + probe.devices[0] + ")";
  return choice;
}

}  // namespace pstrain
