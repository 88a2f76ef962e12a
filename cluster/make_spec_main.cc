// make_cluster_spec: prints a cluster spec's JSON (ClusterSpec::ToJson), for
// scripts that start tasks by hand:
//   make_cluster_spec chief=127.0.0.1:2222 ps=127.0.0.1:2223,127.0.0.1:2224 worker=...
// Each argument is JOB=ADDRESS[,ADDRESS...]. The spec is checked as every
// task checks it; a bad one exits 2 with one line naming the problem.
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

#include "cluster/cluster_spec.h"
#include "core/task_main.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0) {
    std::fprintf(stderr,
                 "usage: make_cluster_spec JOB=ADDRESS[,ADDRESS...] ...\n"
                 "prints the cluster spec's JSON, e.g. for TF_CONFIG's \"cluster\"\n");
    return argc < 2 ? pstrain::kExitBadInput : pstrain::kExitDone;
  }
  pstrain::cluster::ClusterSpec spec;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::fprintf(stderr, "make_cluster_spec: \"%s\" is not JOB=ADDRESS[,ADDRESS...]\n",
                   arg.c_str());
      return pstrain::kExitBadInput;
    }
    std::stringstream addresses(arg.substr(eq + 1));
    std::string address;
    auto& tasks = spec.jobs[arg.substr(0, eq)];
    while (std::getline(addresses, address, ',')) tasks.push_back(address);
  }
  const std::string json = spec.ToJson();
  auto checked = pstrain::cluster::ParseClusterSpecJson(json);
  if (!checked.ok()) {
    std::fprintf(stderr, "make_cluster_spec: invalid cluster spec: %s\n",
                 checked.status().message().c_str());
    return pstrain::kExitBadSpec;
  }
  std::printf("%s\n", json.c_str());
  return pstrain::kExitDone;
}
