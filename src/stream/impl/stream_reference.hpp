#pragma once
// Host reference for the stream kernels: plain loops, no Kokkos parallelism.
// exp is computed in double and compared against the float result.
#include "stream/impl/stream_kernels.hpp"

#include <cmath>
#include <cstdint>

namespace kmini::stream::reference {

struct Check {
  bool ok = true;
  double max_error = 0;  // absolute for add, relative for exp
  std::uint64_t first_bad = 0;
};

// c must equal a + b exactly (integers, and doubles: one rounding of the same operands).
template <class T, class HostView>
Check add(const HostView& c, std::uint64_t seed_a, std::uint64_t seed_b, std::uint64_t first_index) {
  Check r;
  for (std::size_t i = 0; i < c.extent(0); ++i) {
    const T expect = input_value<T>(seed_a, first_index + i) + input_value<T>(seed_b, first_index + i);
    const double err = std::fabs(static_cast<double>(c(i)) - static_cast<double>(expect));
    if (err > r.max_error) r.max_error = err;
    if (c(i) != expect && r.ok) {
      r.ok = false;
      r.first_bad = first_index + i;
    }
  }
  return r;
}

// a after `calls` in-place adds a = a + b, from a = input(seed_a), b =
// input(seed_b): each the same rounding as the device's, so exactly equal.
template <class T, class HostView>
Check add_in_place(const HostView& a, std::uint64_t seed_a, std::uint64_t seed_b, std::uint64_t first_index,
                   std::int64_t calls) {
  Check r;
  for (std::size_t i = 0; i < a.extent(0); ++i) {
    T expect = input_value<T>(seed_a, first_index + i);
    const T b = input_value<T>(seed_b, first_index + i);
    for (std::int64_t k = 0; k < calls; ++k) expect = expect + b;
    const double err = std::fabs(static_cast<double>(a(i)) - static_cast<double>(expect));
    if (err > r.max_error) r.max_error = err;
    if (a(i) != expect && r.ok) {
      r.ok = false;
      r.first_bad = first_index + i;
    }
  }
  return r;
}

// Relative error bound for float exp: 4 ulp (CUDA's expf is within 2 ulp, glibc's within 1).
constexpr double kExpRelativeTolerance = 4.0 * 0x1.0p-23;

template <class HostView>
Check exp(const HostView& c, std::uint64_t seed, std::uint64_t first_index) {
  Check r;
  for (std::size_t i = 0; i < c.extent(0); ++i) {
    const double x = static_cast<double>(input_value<float>(seed, first_index + i));
    const double expect = std::exp(x);
    const double rel = std::fabs(static_cast<double>(c(i)) - expect) / expect;
    if (rel > r.max_error) r.max_error = rel;
    if (!(rel <= kExpRelativeTolerance) && r.ok) {
      r.ok = false;
      r.first_bad = first_index + i;
    }
  }
  return r;
}

}  // namespace kmini::stream::reference
