// DnnlContext: the oneDNN CPU engine and stream that nn's layers run on, and
// the one place where oneDNN's exceptions become Status.
//
// Thread safety: a stream executes in order for one caller; a context (and
// every layer borrowing it) is used by one thread at a time.
#ifndef PSTRAIN_NN_CPU_DNNL_CONTEXT_H_
#define PSTRAIN_NN_CPU_DNNL_CONTEXT_H_

#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <utility>

#include "core/status.h"

namespace pstrain {
namespace nn {
namespace cpu {

struct DnnlContext {
  DnnlContext() : engine(dnnl::engine::kind::cpu, 0), stream(engine) {}
  dnnl::engine engine;
  dnnl::stream stream;
};

// Runs fn (which may throw dnnl::error) and returns its Status; a dnnl::error
// becomes Internal("<what>: <oneDNN message>").
template <typename Fn>
Status CatchDnnl(const char* what, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const dnnl::error& e) {
    return Internal(std::string(what) + ": oneDNN: " + e.what());
  }
}

// A plain row-major f32 memory descriptor.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag);

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain

#endif  // PSTRAIN_NN_CPU_DNNL_CONTEXT_H_
