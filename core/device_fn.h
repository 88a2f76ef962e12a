// PSTRAIN_HD marks small inline functions that both host code and a CUDA
// backend compile, so the element-wise math is written once.
#ifndef PSTRAIN_CORE_DEVICE_FN_H_
#define PSTRAIN_CORE_DEVICE_FN_H_

#ifdef __CUDACC__
#define PSTRAIN_HD __host__ __device__
#else
#define PSTRAIN_HD
#endif

#endif  // PSTRAIN_CORE_DEVICE_FN_H_
