#pragma once
// Host-side encoding of the sparse outputs, shared by the CLI's writers
// (gram_sparse.cpp) and the library (gram_api.cpp), so both produce the same
// bytes: records of int64 fields and a value stored as int32 (counts) or
// float32 (similarities); and count_at_least's totals from the bins.
#include "gram/gram_similarity.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace kmini::gram {

// A record's fields at `at`, each returning where the next one goes.
inline char* put_i8(char* at, std::int64_t v) {
  std::memcpy(at, &v, 8);
  return at + 8;
}

// `value` as a record's value field: int32 counts, float32 otherwise.
inline char* put_value(char* at, Similarity s, double value) {
  if (s == Similarity::Counts) {
    const auto v = static_cast<std::int32_t>(value);
    std::memcpy(at, &v, 4);
  } else {
    const auto v = static_cast<float>(value);
    std::memcpy(at, &v, 4);
  }
  return at + 4;
}

// One record of the pairs file: (i, j, value), kPairRecordBytes bytes.
inline constexpr std::size_t kPairRecordBytes = 20;
inline char* put_pair(char* at, Similarity s, std::int64_t i, std::int64_t j, double value) {
  return put_value(put_i8(put_i8(at, i), j), s, value);
}

inline void append_i8(std::vector<char>& out, std::int64_t v) {
  char bytes[8];
  put_i8(bytes, v);
  out.insert(out.end(), bytes, bytes + 8);
}

inline void append_value(std::vector<char>& out, Similarity s, double value) {
  char bytes[4];
  put_value(bytes, s, value);
  out.insert(out.end(), bytes, bytes + 4);
}

// One entry of a top-k list: (j, value); a missing partner (j = -1) is
// written with value 0.
inline void append_top_k_entry(std::vector<char>& out, Similarity s, std::int64_t j, double value) {
  append_i8(out, j);
  append_value(out, s, j < 0 ? 0.0 : value);
}

// The pairs with value >= x, from `bins` (bins[b]: pairs with exactly b of
// the `sorted` thresholds <= their value): those with more thresholds <= them
// than the thresholds below x.
inline std::int64_t pairs_at_or_above(const std::vector<double>& sorted, const std::vector<std::int64_t>& bins,
                                      double x) {
  const auto below = std::lower_bound(sorted.begin(), sorted.end(), x) - sorted.begin();
  std::int64_t n = 0;
  for (std::size_t b = static_cast<std::size_t>(below) + 1; b < bins.size(); ++b) n += bins[b];
  return n;
}

}  // namespace kmini::gram
