#pragma once
// Large host arrays in transparent huge pages. A bandwidth-bound kernel
// touches every page of arrays of hundreds of MiB on each pass; with 4 KiB
// pages the TLB misses cost it a third of its bandwidth (docs/performance.md,
// "Huge pages"). Linux backs memory with 2 MiB pages only where asked under
// its common setting (transparent_hugepage "madvise"), as numpy's allocator
// asks for its arrays: so kmini asks for its streamed arrays, before their
// first touch. On device memory spaces, and off Linux, nothing is asked.
#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>

namespace kmini {

// Asks for huge pages for the whole pages inside [data, data + bytes).
// Advice only: a kernel without transparent huge pages ignores it.
void advise_huge_pages(void* data, std::size_t bytes);

// advise_huge_pages on a view's memory where that is host memory.
template <class View>
void advise_huge_pages(const View& v) {
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename View::memory_space>::accessible)
    advise_huge_pages(static_cast<void*>(v.data()), v.span() * sizeof(typename View::non_const_value_type));
}

// View(label, extents...), zero-filled as such a view is, with the advice
// given before the fill touches its pages.
template <class View, class... Extents>
View huge_page_view(const std::string& label, Extents... extents) {
  View v(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), extents...);
  advise_huge_pages(v);
  Kokkos::deep_copy(v, typename View::non_const_value_type{});
  return v;
}

}  // namespace kmini
