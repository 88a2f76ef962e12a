// Cluster specs as JSON files hold them and as TF_CONFIG carries them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "cluster/cluster_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)pstrain::cluster::ParseClusterSpecJson(text);
  (void)pstrain::cluster::ResolveClusterConfig("", text.c_str(), "", -1);
  return 0;
}
