#include "core/flush_denormals.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace pstrain {

namespace {

#if defined(__x86_64__) || defined(__i386__)
constexpr unsigned int kFlushToZero = 0x8000;       // MXCSR.FTZ: denormal results become 0
constexpr unsigned int kDenormalsAreZero = 0x0040;  // MXCSR.DAZ: denormal inputs read as 0
unsigned int Mode() { return _mm_getcsr(); }
void SetMode(unsigned int mode) { _mm_setcsr(mode); }
#else
constexpr unsigned int kFlushToZero = 0, kDenormalsAreZero = 0;  // elsewhere: unchanged
unsigned int Mode() { return 0; }
void SetMode(unsigned int) {}
#endif

}  // namespace

ScopedFlushDenormals::ScopedFlushDenormals() : saved_(Mode()) {
  SetMode(saved_ | kFlushToZero | kDenormalsAreZero);
}

ScopedFlushDenormals::~ScopedFlushDenormals() { SetMode(saved_); }

void FlushDenormalsInThisThread() { SetMode(Mode() | kFlushToZero | kDenormalsAreZero); }

}  // namespace pstrain
