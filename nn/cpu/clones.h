// PSTRAIN_CLONES: compile a function twice, for x86-64-v3 (AVX2 and FMA)
// and for the baseline the project builds for, and let the loader pick the
// one the CPU runs: loops over floats vectorize twice as wide where the CPU
// has AVX2.
#ifndef PSTRAIN_NN_CPU_CLONES_H_
#define PSTRAIN_NN_CPU_CLONES_H_

#define PSTRAIN_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))

#endif  // PSTRAIN_NN_CPU_CLONES_H_
