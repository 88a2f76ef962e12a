// cuBLAS is opened on first use, not at the start: the process maps no
// libcublas until Cublas() is called, then names cuBLAS's statuses through
// it. Needs the library, not a GPU.
#include "nn/cuda/cublas_library.h"
#include "core/testing/status_assertions.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

namespace pstrain {
namespace nn {
namespace cuda {
namespace {

// Whether this process has a library named `name` mapped.
bool Mapped(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (line.find(name) != std::string::npos) return true;
  }
  return false;
}

TEST(CublasLibrary, OpensOnFirstUseAndNamesItsStatuses) {
  EXPECT_FALSE(Mapped("libcublas")) << "cuBLAS was loaded before any GPU asked for it";
  auto blas = Cublas();
  ASSERT_TRUE(blas.ok()) << blas.status().ToString();
  EXPECT_TRUE(Mapped("libcublas"));
  EXPECT_STREQ((*blas)->GetStatusName(CUBLAS_STATUS_NOT_INITIALIZED),
               "CUBLAS_STATUS_NOT_INITIALIZED");
  auto again = Cublas();
  PS_ASSERT_OK(again);
  EXPECT_EQ(*again, *blas);  // opened once
}

}  // namespace
}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
