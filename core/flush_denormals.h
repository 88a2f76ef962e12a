// Denormal floats flushed to zero, as TensorFlow's CPU threads flush them
// (its ScopedFlushDenormal). Arithmetic on denormals takes a microcode
// assist of about a hundred cycles per operation: a momentum accumulator
// whose gradient is zero decays by 0.9 a step into denormal range after some
// 800 steps, and from then on the ps's Momentum update ran ten times slower
// (the mnist step went from 0.047 to 0.100 s in mnist_step_bench).
#ifndef PSTRAIN_CORE_FLUSH_DENORMALS_H_
#define PSTRAIN_CORE_FLUSH_DENORMALS_H_

namespace pstrain {

// While alive, this thread treats denormal inputs and results as zero (x86:
// MXCSR's FTZ and DAZ bits); restores the previous mode when destroyed.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals();
  ~ScopedFlushDenormals();
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned int saved_;
};

// Flushes denormals in the calling thread for the rest of its life.
void FlushDenormalsInThisThread();

}  // namespace pstrain

#endif  // PSTRAIN_CORE_FLUSH_DENORMALS_H_
