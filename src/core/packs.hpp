#pragma once
// 16-byte packs: 16 / sizeof(T) consecutive reals read or written as one
// access (on GPUs one 128-bit load or store, LDG.E.128 / STG.E.128 on NVIDIA),
// for kernels whose deck offers vector loads (rk4.loads, discount.loads). The
// values are the same as element by element: only the width of the access
// changes. The pointers must be 16-byte aligned (aligned16).
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini {

template <class T>
struct alignas(16) Pack16 {
  static constexpr int size = 16 / static_cast<int>(sizeof(T));
  T v[size];
};

// N reals from p (16-byte aligned; N a multiple of the pack) into out.
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void load_packs(const T* p, T* out) {
  constexpr int W = Pack16<T>::size;
  static_assert(N % W == 0, "whole packs");
  for (int k = 0; k < N / W; ++k) {
    const Pack16<T> w = reinterpret_cast<const Pack16<T>*>(p)[k];
    for (int j = 0; j < W; ++j) out[k * W + j] = w.v[j];
  }
}

// N reals of in to p (16-byte aligned; N a multiple of the pack).
template <int N, class T>
KOKKOS_FORCEINLINE_FUNCTION void store_packs(T* p, const T* in) {
  constexpr int W = Pack16<T>::size;
  static_assert(N % W == 0, "whole packs");
  for (int k = 0; k < N / W; ++k) {
    Pack16<T> w;
    for (int j = 0; j < W; ++j) w.v[j] = in[k * W + j];
    reinterpret_cast<Pack16<T>*>(p)[k] = w;
  }
}

inline bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

}  // namespace kmini
