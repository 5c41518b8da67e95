#pragma once
// One rank's discount arrays on the device, how its inputs are filled (from
// files, converted, or generated) and the kernel dispatch for the deck's
// reduction. Used by discount_run.cpp.
#include "core/huge_pages.hpp"
#include "discount/discount.hpp"
#include "discount/discount_api.hpp"
#include "discount/impl/discount_kernels.hpp"
#include "io/npy.hpp"
#include "kernel/kernel.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kmini::discount::detail {

// Views are constructed in place, never assigned over default-constructed
// ones (the Kokkos 4.6 development snapshot crashes on that move assignment).
template <class T>
struct DeviceArrays {
  DeviceArrays(std::int64_t dates, std::int64_t ids, std::int64_t terms, bool cv_on, Reduce reduce, std::int64_t blocks)
      : mult(huge_page_view<Matrix>("kmini::discount::mult_by", ids, terms)),
        disc(huge_page_view<Cube>("kmini::discount::discount", dates, ids, terms)),
        cv(huge_page_view<Cube>("kmini::discount::cv", cv_on ? dates : 0, cv_on ? ids : 0, cv_on ? terms : 0)),
        partial("kmini::discount::block_sums", reduce == Reduce::PerDate ? dates : 0, blocks),
        sums("kmini::discount::sums", reduce == Reduce::PerDate ? dates
                                      : reduce == Reduce::PerId ? ids
                                                                : 0) {}
  using Matrix = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
  using Cube = Kokkos::View<T***, Kokkos::LayoutRight, MemSpace>;
  Matrix mult;                                               // M x O
  Cube disc, cv;                                             // D_local x M x O (cv empty when not computed)
  Kokkos::View<T**, Kokkos::LayoutRight, MemSpace> partial;  // per_date block sums
  Kokkos::View<T*, MemSpace> sums;                           // per_date (D_local) or per_id (M)
};

// Reads `count` elements from `first` of a .npy of f8 or f4 into T, in chunks.
template <class T>
void read_converted(const npy::Info& info, std::uint64_t first, std::uint64_t count, T* dst) {
  if (info.dtype == npy::DTypeOf<T>::value) return npy::read_elements(info, first, count, dst);
  const std::uint64_t chunk = std::uint64_t(1) << 20;
  auto convert = [&](auto tag) {
    std::vector<decltype(tag)> buf(std::min(chunk, count));
    for (std::uint64_t done = 0; done < count; done += chunk) {
      const std::uint64_t now = std::min(chunk, count - done);
      npy::read_elements(info, first + done, now, buf.data());
      for (std::uint64_t k = 0; k < now; ++k) dst[done + k] = static_cast<T>(buf[k]);
    }
  };
  if (info.dtype == npy::DType::F8) convert(double{});
  else convert(float{});
}

// Fills device view `v` (a slice starting at global element `first`) from
// its spec, and its host mirror `h` with the same values. Returns how many
// values read from a file are NaN or infinite (generated inputs have none).
template <class T, class DeviceView, class HostView>
std::int64_t load_input(const ExecSpace& exec, const InputSpec& spec, std::uint64_t first, const DeviceView& v,
                        const HostView& h) {
  const Row<T> flat(v.data(), v.span());
  std::int64_t nonfinite = 0;
  if (spec.source == InputSpec::Source::File) {
    read_converted<T>(spec.file, first, v.span(), h.data());
    for (std::size_t k = 0; k < v.span(); ++k) nonfinite += std::isfinite(h.data()[k]) ? 0 : 1;
    Kokkos::deep_copy(exec, v, h);
  } else {
    if (spec.source == InputSpec::Source::Arange) fill_arange<T>(exec, flat, first);
    else fill_random<T>(exec, flat, spec.seed, first);
    Kokkos::deep_copy(exec, h, v);
  }
  exec.fence();
  return nonfinite;
}

template <class T>
void compute(const ExecSpace& exec, const Config& c, const DeviceArrays<T>& a) {
  const auto mult = as_row(a.mult);
  const auto disc = as_rows(a.disc);
  const auto cv = Rows<T>(a.cv.data(), a.cv.extent(0), a.cv.extent(1) * a.cv.extent(2));
  const bool write_cv = c.computes_cv();
  switch (c.reduce) {
    case Reduce::None: {  // the library function the Python front end calls too
      ApplyParams params;
      params.stores = c.stream_cv ? ApplyParams::Stores::Streaming : ApplyParams::Stores::Regular;
      params.policy = c.policy == Policy::Flat   ? ApplyParams::Policy::Flat
                      : c.policy == Policy::Wave ? ApplyParams::Policy::Wave
                                                 : ApplyParams::Policy::MDRange;
      params.loads = c.vector_loads ? ApplyParams::Loads::Vector : ApplyParams::Loads::Scalar;
      apply(exec, ApiRow<const T>(mult.data(), mult.extent(0)),
            ApiRows<const T>(disc.data(), disc.extent(0), disc.extent(1)),
            ApiRows<T>(cv.data(), cv.extent(0), cv.extent(1)), params);
      break;
    }
    case Reduce::PerDate:
      if (write_cv) reduce_per_date<true>(exec, mult, disc, cv, a.partial, a.sums);
      else reduce_per_date<false>(exec, mult, disc, cv, a.partial, a.sums);
      break;
    case Reduce::PerId:
      if (write_cv) reduce_per_id<true>(exec, a.mult, a.disc, a.cv, a.sums);
      else reduce_per_id<false>(exec, a.mult, a.disc, a.cv, a.sums);
      break;
  }
}

}  // namespace kmini::discount::detail
