#pragma once
// Device kernels of the stream benchmark: the bandwidth calibration every
// other kernel reports its fraction of.
#include "core/kokkos_compat.hpp"
#include "core/random.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace kmini::stream {

// The input value at global index i: a function of (seed, i) only.
template <class T>
KOKKOS_INLINE_FUNCTION T input_value(std::uint64_t seed, std::uint64_t i);
template <>
KOKKOS_INLINE_FUNCTION double input_value<double>(std::uint64_t seed, std::uint64_t i) {
  return random::uniform(seed, i, -1.0, 1.0);
}
template <>
KOKKOS_INLINE_FUNCTION std::int32_t input_value<std::int32_t>(std::uint64_t seed, std::uint64_t i) {
  // |a + b| stays far from int32 overflow.
  return static_cast<std::int32_t>(random::hash(seed, i) % (1u << 21)) - (1 << 20);
}
template <>
KOKKOS_INLINE_FUNCTION float input_value<float>(std::uint64_t seed, std::uint64_t i) {
  return static_cast<float>(random::uniform(seed, i, -20.0, 20.0));  // exp stays finite in float
}

template <class ViewType>
struct StreamFill {
  using T = typename ViewType::non_const_value_type;
  const ViewType v;
  const std::uint64_t seed, first_index;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { v(i) = input_value<T>(seed, first_index + i); }
};

// `prefix`: the kernels' names, kmini::stream::<what> unless the roof probe
// of another kernel runs them (kmini::<kernel>::roof_probe::<what>).
template <class ViewType, class Exec>
void fill(const Exec& exec, const ViewType& v, std::uint64_t seed, std::uint64_t first_index,
          const std::string& prefix = "kmini::stream") {
  Kokkos::parallel_for(prefix + "::fill", Kokkos::RangePolicy<Exec>(exec, 0, v.extent(0)),
                       StreamFill<ViewType>{v, seed, first_index});
}

template <class InView, class OutView>
struct StreamAdd {
  const InView a, b;
  const OutView c;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { c(i) = a(i) + b(i); }
};

// c = a + b
template <class InView, class OutView, class Exec>
void add(const Exec& exec, const InView& a, const InView& b, const OutView& c,
         const std::string& prefix = "kmini::stream") {
  Kokkos::parallel_for(prefix + "::add", Kokkos::RangePolicy<Exec>(exec, 0, c.extent(0)),
                       StreamAdd<InView, OutView>{a, b, c});
}

template <class InView, class InOutView>
struct StreamAddInPlace {
  const InView b;
  const InOutView a;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { a(i) = a(i) + b(i); }
};

// a = a + b: reads a and b, writes a. Every byte counted is a byte moved: the
// line written was just read, so caches add no write-allocate read of it
// (add's c = a + b moves c twice on write-allocate caches, counted once).
template <class InView, class InOutView, class Exec>
void add_in_place(const Exec& exec, const InOutView& a, const InView& b, const std::string& prefix = "kmini::stream") {
  Kokkos::parallel_for(prefix + "::add_in_place", Kokkos::RangePolicy<Exec>(exec, 0, a.extent(0)),
                       StreamAddInPlace<InView, InOutView>{b, a});
}

template <class InView, class OutView>
struct StreamExp {
  const InView a;
  const OutView c;
  KOKKOS_INLINE_FUNCTION void operator()(const std::size_t i) const { c(i) = compat::exp(a(i)); }
};

// c = exp(a), elementwise
template <class InView, class OutView, class Exec>
void exp(const Exec& exec, const InView& a, const OutView& c) {
  Kokkos::parallel_for("kmini::stream::exp", Kokkos::RangePolicy<Exec>(exec, 0, c.extent(0)),
                       StreamExp<InView, OutView>{a, c});
}

}  // namespace kmini::stream
