#pragma once
// Counter-based random numbers: value i depends only on (seed, i), so every
// rank generates its part of a distributed array without communication and
// the result is the same whatever the rank count. Usable in kernels and on the host.
#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::random {

// SplitMix64 finaliser of (seed, index): a well-mixed 64-bit hash.
KOKKOS_INLINE_FUNCTION std::uint64_t hash(std::uint64_t seed, std::uint64_t index) {
  std::uint64_t z = seed * 0x9E3779B97F4A7C15ull + index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform double in [0, 1) with 53 random bits.
KOKKOS_INLINE_FUNCTION double uniform01(std::uint64_t seed, std::uint64_t index) {
  return static_cast<double>(hash(seed, index) >> 11) * 0x1.0p-53;
}

// Uniform double in [lo, hi).
KOKKOS_INLINE_FUNCTION double uniform(std::uint64_t seed, std::uint64_t index, double lo, double hi) {
  return lo + (hi - lo) * uniform01(seed, index);
}

}  // namespace kmini::random
