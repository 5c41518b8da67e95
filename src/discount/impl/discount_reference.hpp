#pragma once
// Host reference for the discount kernels: plain sequential loops over host
// arrays, written from the numerical definitions in discount_kernels.hpp
// (std::fma, the same lane/block order), so results must agree bitwise.
#include "discount/impl/discount_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kmini::discount::reference {

// Equal values, or both NaN. NaN inputs propagate into cv and the sums as in
// numpy (README: "NaN in inputs"); NaN payloads and signs may differ between
// backends (CUDA returns a canonical NaN), so NaNs compare by class.
template <class T>
bool same_value(T a, T b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// Index of the first cv[d][r] that differs from mult[r] * disc[d][r], or -1.
template <class T>
std::int64_t first_cv_difference(const T* mult, const T* disc, const T* cv, std::int64_t dates, std::int64_t row) {
  for (std::int64_t d = 0; d < dates; ++d)
    for (std::int64_t r = 0; r < row; ++r)
      if (!same_value<T>(cv[d * row + r], mult[r] * disc[d * row + r])) return d * row + r;
  return -1;
}

template <class T>
std::vector<T> per_date(const T* mult, const T* disc, std::int64_t dates, std::int64_t row) {
  std::vector<T> sums(static_cast<std::size_t>(dates));
  for (std::int64_t d = 0; d < dates; ++d) {
    T total = 0;
    for (std::int64_t begin = 0; begin < row; begin += kBlock) {
      const std::int64_t len = std::min<std::int64_t>(kBlock, row - begin);
      T lanes[kLanes] = {};
      for (std::int64_t t = 0; t < len; ++t) {
        T& a = lanes[t % kLanes];
        a = std::fma(mult[begin + t], disc[d * row + begin + t], a);
      }
      total += combine_lanes(lanes);
    }
    sums[d] = total;
  }
  return sums;
}

template <class T>
std::vector<T> per_id(const T* mult, const T* disc, std::int64_t dates, std::int64_t ids, std::int64_t terms) {
  std::vector<T> sums(static_cast<std::size_t>(ids), T(0));
  for (std::int64_t d = 0; d < dates; ++d)
    for (std::int64_t i = 0; i < ids; ++i) {
      T q = 0;
      for (std::int64_t n = 0; n < terms; ++n) q = std::fma(mult[i * terms + n], disc[(d * ids + i) * terms + n], q);
      sums[i] += q;
    }
  return sums;
}

// Index of the first element where a and b differ as values (NaN equals NaN), or -1.
template <class T, class A, class B>
std::int64_t first_difference(const A& a, const B& b, std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k)
    if (!same_value<T>(a[k], b[k])) return k;
  return -1;
}

}  // namespace kmini::discount::reference
