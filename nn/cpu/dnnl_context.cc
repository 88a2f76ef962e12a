#include "nn/cpu/dnnl_context.h"

namespace pstrain {
namespace nn {
namespace cpu {

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

}  // namespace cpu
}  // namespace nn
}  // namespace pstrain
