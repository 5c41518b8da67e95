#pragma once
// Host reference for the Gram product: rows packed bit by bit with plain
// loops from the unpacked source, C(i, j) counted word by word. Independent of
// the device packing, tiling, staging and symmetry. And the outputs from a
// full host C: similarities (written out from their definitions), pairs at or
// above a minimum, top-k partners (a full sort), counts at thresholds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace kmini::gram::reference {

// rows x words, bit k % 64 of word k / 64 = column k.
struct HostPacked {
  std::int64_t rows = 0, words = 0;
  std::vector<std::uint64_t> bits;
};

// Packs n unpacked rows (n x cols bytes) into rows row0.. of p.
inline void pack_rows(HostPacked& p, const std::vector<std::uint8_t>& unpacked, std::int64_t row0, std::int64_t n,
                      std::int64_t cols) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t k = 0; k < cols; ++k)
      if (unpacked[i * cols + k]) p.bits[(row0 + i) * p.words + k / 64] |= std::uint64_t(1) << (k % 64);
}

inline HostPacked pack(const std::vector<std::uint8_t>& unpacked, std::int64_t rows, std::int64_t cols) {
  HostPacked p{rows, (cols + 63) / 64, {}};
  p.bits.assign(static_cast<std::size_t>(rows * p.words), 0);
  pack_rows(p, unpacked, 0, rows, cols);
  return p;
}

// C(i, j) of A B^T: row i of a, row j of b.
inline std::int64_t count(const HostPacked& a, std::int64_t i, const HostPacked& b, std::int64_t j) {
  std::int64_t c = 0;
  for (std::int64_t w = 0; w < a.words; ++w)
    c += __builtin_popcountll(a.bits[i * a.words + w] & b.bits[j * b.words + w]);
  return c;
}
inline std::int64_t count(const HostPacked& p, std::int64_t i, std::int64_t j) { return count(p, i, p, j); }

// The full C (a.rows x b.rows) and the rows' counts of ones.
struct HostGram {
  std::int64_t rows = 0, targets = 0;
  bool symmetric = true;  // one input: pairs are i < j, partners exclude the row itself
  std::vector<std::int64_t> c, ones_a, ones_b;
};
inline HostGram gram(const HostPacked& a, const HostPacked& b, bool symmetric) {
  HostGram g{a.rows, b.rows, symmetric, {}, {}, {}};
  for (std::int64_t i = 0; i < a.rows; ++i) g.ones_a.push_back(count(a, i, a, i));
  for (std::int64_t j = 0; j < b.rows; ++j) g.ones_b.push_back(count(b, j, b, j));
  for (std::int64_t i = 0; i < a.rows; ++i)
    for (std::int64_t j = 0; j < b.rows; ++j) g.c.push_back(count(a, i, b, j));
  return g;
}

// "counts", "jaccard", "dice", "cosine" of c, |a|, |b|; 0 for a zero denominator.
inline double similarity(const std::string& kind, std::int64_t c, std::int64_t na, std::int64_t nb) {
  if (kind == "jaccard") return na + nb - c == 0 ? 0.0 : double(c) / double(na + nb - c);
  if (kind == "dice") return na + nb == 0 ? 0.0 : 2.0 * double(c) / double(na + nb);
  if (kind == "cosine") return na == 0 || nb == 0 ? 0.0 : double(c) / std::sqrt(double(na) * double(nb));
  return double(c);
}
inline double value(const HostGram& g, const std::string& kind, std::int64_t i, std::int64_t j) {
  return similarity(kind, g.c[i * g.targets + j], g.ones_a[i], g.ones_b[j]);
}

struct Pair {
  std::int64_t i, j;
  double value;
};
// Every pair with value >= min, by (i, j); one input: i < j.
inline std::vector<Pair> pairs(const HostGram& g, const std::string& kind, double min) {
  std::vector<Pair> out;
  for (std::int64_t i = 0; i < g.rows; ++i)
    for (std::int64_t j = g.symmetric ? i + 1 : 0; j < g.targets; ++j)
      if (value(g, kind, i, j) >= min) out.push_back({i, j, value(g, kind, i, j)});
  return out;
}

// Number of pairs (as above) with value >= each threshold.
inline std::vector<std::int64_t> count_at_least(const HostGram& g, const std::string& kind,
                                                const std::vector<double>& thresholds) {
  std::vector<std::int64_t> out;
  for (double x : thresholds) out.push_back(static_cast<std::int64_t>(pairs(g, kind, x).size()));
  return out;
}

// Row i's k best partners: value descending, then j ascending; the row itself
// excluded with one input; padded with j = -1, value 0.
inline std::vector<Pair> top_k(const HostGram& g, const std::string& kind, std::int64_t i, std::int64_t k) {
  std::vector<Pair> all;
  for (std::int64_t j = 0; j < g.targets; ++j)
    if (!g.symmetric || j != i) all.push_back({i, j, value(g, kind, i, j)});
  std::sort(all.begin(), all.end(),
            [](const Pair& x, const Pair& y) { return x.value != y.value ? x.value > y.value : x.j < y.j; });
  all.resize(static_cast<std::size_t>(k), Pair{i, -1, 0.0});
  return all;
}

}  // namespace kmini::gram::reference
