#include "nn/cuda/cublas_library.h"

#include <dlfcn.h>

#include <string>

namespace pstrain {
namespace nn {
namespace cuda {

namespace {

// Each entry point by name, or why not.
template <typename F>
Status Resolve(void* library, const char* name, F* f) {
  *f = reinterpret_cast<F>(dlsym(library, name));
  if (*f != nullptr) return OkStatus();
  return FailedPrecondition(std::string(PSTRAIN_CUBLAS_SONAME) + " has no " + name);
}

StatusOr<CublasLibrary> Open() {
  void* library = dlopen(PSTRAIN_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return FailedPrecondition(std::string("cannot load cuBLAS (") + PSTRAIN_CUBLAS_SONAME +
                              "): " + (why != nullptr ? why : "unknown"));
  }
  CublasLibrary l;
  PS_RETURN_IF_ERROR(Resolve(library, "cublasCreate_v2", &l.Create));
  PS_RETURN_IF_ERROR(Resolve(library, "cublasDestroy_v2", &l.Destroy));
  PS_RETURN_IF_ERROR(Resolve(library, "cublasSetStream_v2", &l.SetStream));
  PS_RETURN_IF_ERROR(Resolve(library, "cublasSgemm_v2", &l.Sgemm));
  PS_RETURN_IF_ERROR(Resolve(library, "cublasSgemv_v2", &l.Sgemv));
  PS_RETURN_IF_ERROR(Resolve(library, "cublasGetStatusName", &l.GetStatusName));
  PS_RETURN_IF_ERROR(Resolve(library, "cublasGetStatusString", &l.GetStatusString));
  return l;  // the library stays open: the backend's handles outlive any scope here
}

}  // namespace

StatusOr<const CublasLibrary*> Cublas() {
  static const StatusOr<CublasLibrary>* const opened = new StatusOr<CublasLibrary>(Open());
  if (!opened->ok()) return opened->status();
  return &opened->value();
}

}  // namespace cuda
}  // namespace nn
}  // namespace pstrain
