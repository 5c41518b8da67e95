#pragma once
// The nvcc defect behind the H200 crash, in two translation units and no GPU:
// a header function (inlined into each unit) holds an extended __host__
// __device__ lambda (KOKKOS_LAMBDA on CUDA) and hands it to a merged template
// function (as Kokkos hands a functor to ParallelFor<F>::execute). Each unit
// has its own __nv_hdl_helper; the merged function reads the first unit's.
// Built with -DAS_FUNCTOR the kernel is a functor, as kmini's headers are now.
// tests/scripts/test_check_lambda_wrappers.py builds and runs both.
#include <cstdio>

template <class F>
__attribute__((noinline)) int launch(F f, int i) {
  F copy(f);  // as a parallel_for copies its functor
  return copy(i);
}

#ifdef AS_FUNCTOR
template <class T>
struct Kernel {
  T x;
  int table[8];
  __host__ __device__ int operator()(int i) const { return int(x) + table[i & 7] + table[(i + 1) & 7]; }
};
#endif

template <class T>
__attribute__((always_inline)) inline int run(T x) {
  const int table[8] = {1, 2, 3, 4, 5, 6, 7, 8};
#ifdef AS_FUNCTOR
  return launch(Kernel<T>{x, {table[0], table[1], table[2], table[3], table[4], table[5], table[6], table[7]}}, 3);
#else
  return launch([=] __host__ __device__(int i) { return int(x) + table[i & 7] + table[(i + 1) & 7]; }, 3);
#endif
}

int from_first_unit();
int from_second_unit();
