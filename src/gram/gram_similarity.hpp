#pragma once
// The similarity of two rows a, b of 0/1 values from c = popcount(a & b) and
// their counts of ones |a|, |b|, in double (what the sparse outputs compare);
// stored as float32 (counts: int32). Two empty rows (0/0) score `empty`
// (gram.empty_similarity: 0 by default, 1 as RDKit's BulkTanimotoSimilarity
// gives); an empty row against a non-empty one scores 0. Tversky scores
// `empty` wherever its denominator is 0: two empty rows, and with a zero
// weight an empty row against one whose other ones have that weight (as
// RDKit's TverskySimilarity, which gives 1.0 for any zero denominator).
#include "core/kokkos_compat.hpp"

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <string>

namespace kmini::gram {

enum class Similarity { Counts, Jaccard, Dice, Cosine, Tversky };
inline constexpr Similarity kSimilarities[] = {Similarity::Counts, Similarity::Jaccard, Similarity::Dice,
                                               Similarity::Cosine, Similarity::Tversky};

// The similarities' parameters: the score of two empty rows, and Tversky's
// weights of a's and b's own ones (gram.tversky.alpha, .beta).
struct SimilarityParams {
  double empty = 0.0;
  double alpha = 1.0, beta = 1.0;
};

// Whether s(a, b) may differ from s(b, a): Tversky with alpha != beta.
inline bool asymmetric(Similarity s, const SimilarityParams& p) {
  return s == Similarity::Tversky && p.alpha != p.beta;
}

inline const char* similarity_name(Similarity s) {
  switch (s) {
    case Similarity::Jaccard: return "jaccard";
    case Similarity::Dice: return "dice";
    case Similarity::Cosine: return "cosine";
    case Similarity::Tversky: return "tversky";
    default: return "counts";
  }
}

// Other names of the similarities, accepted wherever a name is (the deck's
// gram.similarity, Python's similarity=): tanimoto is cheminformatics' name
// of the Jaccard similarity of fingerprints.
struct SimilarityAlias {
  const char* name;
  Similarity kind;
};
inline constexpr SimilarityAlias kSimilarityAliases[] = {{"tanimoto", Similarity::Jaccard}};

// The similarity a name or an alias names; false where none does.
inline bool similarity_from_name(const std::string& name, Similarity& out) {
  for (Similarity k : kSimilarities) {
    if (name != similarity_name(k)) continue;
    out = k;
    return true;
  }
  for (const SimilarityAlias& a : kSimilarityAliases) {
    if (name != a.name) continue;
    out = a.kind;
    return true;
  }
  return false;
}

// counts: c; jaccard: c / (|a| + |b| - c); dice: 2c / (|a| + |b|);
// cosine: c / sqrt(|a| |b|); tversky: c / (c + alpha (|a| - c) + beta (|b| - c))
// (alpha = beta = 1: jaccard, 1/2: dice; alpha = 1, beta = 0: the share of
// a's ones that b has). A zero denominator means c = 0 (two empty rows, one
// for cosine, or Tversky's zero weight): dividing by 1 instead gives the 0,
// and `empty` is selected where both rows are empty (Tversky: where its
// denominator is 0), without a branch around the division (the scans over a
// slice vectorise).
KOKKOS_INLINE_FUNCTION double similarity_value(Similarity s, std::int64_t c, std::int64_t na, std::int64_t nb,
                                               const SimilarityParams& p = {}) {
  const double empty = p.empty;
  // Selects as arithmetic (a zero denominator plus one; `empty` times the
  // flag), so that compilers vectorise the scans rather than branch.
  const std::int64_t both_empty = na + nb == 0 ? 1 : 0;
  const double not_empty = double(1 - both_empty), if_empty = double(both_empty) * empty;
  switch (s) {
    case Similarity::Jaccard: {
      const std::int64_t u = na + nb - c;
      return double(c) / double(u + (u == 0 ? 1 : 0)) * not_empty + if_empty;
    }
    case Similarity::Dice: {
      const std::int64_t d = na + nb;
      return 2.0 * double(c) / double(d + (d == 0 ? 1 : 0)) * not_empty + if_empty;
    }
    case Similarity::Cosine: {
      const std::int64_t prod = na * nb;
      return double(c) / compat::sqrt(double(prod + (prod == 0 ? 1 : 0))) * not_empty + if_empty;
    }
    case Similarity::Tversky: {  // `empty` wherever d = 0, as RDKit's TverskySimilarity gives 1.0 there
      const double d = double(c) + p.alpha * double(na - c) + p.beta * double(nb - c);
      const double zero = d == 0.0 ? 1.0 : 0.0;
      return double(c) / (d + zero) + zero * empty;
    }
    default: return double(c);
  }
}

}  // namespace kmini::gram
