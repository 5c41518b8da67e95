#pragma once
// The similarity of two rows a, b of 0/1 values from c = popcount(a & b) and
// their counts of ones |a|, |b|, in double (what the sparse outputs compare);
// stored as float32 (counts: int32). 0 when the denominator is 0.
#include "core/kokkos_compat.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>

namespace kmini::gram {

enum class Similarity { Counts, Jaccard, Dice, Cosine };

inline const char* similarity_name(Similarity s) {
  switch (s) {
    case Similarity::Jaccard: return "jaccard";
    case Similarity::Dice: return "dice";
    case Similarity::Cosine: return "cosine";
    default: return "counts";
  }
}

// counts: c; jaccard: c / (|a| + |b| - c); dice: 2c / (|a| + |b|);
// cosine: c / sqrt(|a| |b|). A zero denominator means two empty rows (one
// for cosine), so c = 0: dividing by 1 instead gives the 0 without a branch
// around the division (the scans over a slice vectorise).
KOKKOS_INLINE_FUNCTION double similarity_value(Similarity s, std::int64_t c, std::int64_t na, std::int64_t nb) {
  switch (s) {
    case Similarity::Jaccard: {
      const std::int64_t u = na + nb - c;
      return double(c) / double(u > 0 ? u : 1);
    }
    case Similarity::Dice: {
      const std::int64_t d = na + nb;
      return 2.0 * double(c) / double(d > 0 ? d : 1);
    }
    case Similarity::Cosine: {
      const std::int64_t p = na * nb;
      return double(c) / compat::sqrt(double(p > 0 ? p : 1));
    }
    default: return double(c);
  }
}

}  // namespace kmini::gram
