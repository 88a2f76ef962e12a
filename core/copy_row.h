// CopyRow: one short row of floats (an embedding row, tens of floats) as
// copies of constant sizes, which the compiler makes moves in place; a
// memcpy of a length known only at run time is a call, and a step that
// gathers or scatters a hundred thousand rows of ten floats pays one each.
#ifndef PSTRAIN_CORE_COPY_ROW_H_
#define PSTRAIN_CORE_COPY_ROW_H_

#include <cstdint>
#include <cstring>

namespace pstrain {

inline void CopyRow(float* dst, const float* src, int64_t n) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) std::memcpy(dst + i, src + i, 4 * sizeof(float));
  switch (n - i) {
    case 3:
      dst[i + 2] = src[i + 2];
      [[fallthrough]];
    case 2:
      dst[i + 1] = src[i + 1];
      [[fallthrough]];
    case 1:
      dst[i] = src[i];
      break;
    default:
      break;
  }
}

}  // namespace pstrain

#endif  // PSTRAIN_CORE_COPY_ROW_H_
