// The agreements before a computation over the ranks (gram_over_ranks.hpp):
// where the rows are, the arguments, the plan.
#include "gram/distributed/gram_over_ranks.hpp"

#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace kmini::gram {
namespace {

// A digest (FNV-1a) of a host matrix's elements, whatever its form: of its
// rows as words (column k in bit k % 64 of word k / 64), so copies of one
// matrix in different forms agree and matrices that differ do not.
std::int64_t digest(const ApiMatrix& m) {
  using Format = ApiMatrix::Format;
  const std::int64_t words = (m.cols + 63) / 64, row_bytes = m.row_bytes();
  const auto* bytes = static_cast<const unsigned char*>(m.data);
  std::vector<std::uint64_t> row(static_cast<std::size_t>(words));
  std::uint64_t h = 14695981039346656037ull;
  for (std::int64_t i = 0; i < m.rows; ++i) {
    const unsigned char* r = bytes + i * row_bytes;
    std::fill(row.begin(), row.end(), 0);
    if (m.format == Format::Words) std::memcpy(row.data(), r, static_cast<std::size_t>(row_bytes));
    for (std::int64_t k = 0; m.format != Format::Words && k < m.cols; ++k) {
      const bool one = m.format == Format::Unpacked ? r[k] != 0 : ((r[k / 8] >> (7 - k % 8)) & 1) != 0;
      row[static_cast<std::size_t>(k / 64)] |= std::uint64_t(one) << (k % 64);
    }
    for (std::uint64_t w : row) h = (h ^ w) * 1099511628211ull;
  }
  std::int64_t out = 0;
  std::memcpy(&out, &h, sizeof out);
  return out;
}

// B's form over the ranks, from each rank's digest of its B: whole, the same
// on every rank (replicated), or each rank's own block (ring, auto). Every
// rank passing the same rows is B whole: with the ring its rows would count
// once per rank, so it is refused rather than computed as P copies of B
// (blocks that are truly equal, all-zero rows say, can go replicated).
void check_b_form(const OverRanks& o, const std::vector<std::int64_t>& all, int fields) {
  if (!o.b || o.ranks < 2) return;
  bool same = true;
  for (int q = 1; q < o.ranks; ++q)
    same = same && all[static_cast<std::size_t>(fields * q + 2)] == all[2] &&
           all[static_cast<std::size_t>(fields * q + 4)] == all[4];
  const std::string d = distribution_name(o.p.distribution);
  if (!o.spread_b() && !same)
    throw std::invalid_argument(
        "B: not the same on every rank with distribution='replicated', expected B whole on every "
        "rank (B in blocks is for 'ring' or 'auto')");
  if (o.spread_b() && same && o.b->rows > 0)
    throw std::invalid_argument("B: the same " + std::to_string(o.b->rows) + " rows on every rank with distribution='" +
                                d +
                                "', expected each rank's own block of B's rows (B whole, or blocks that are equal, go "
                                "with 'replicated')");
}

}  // namespace

void place_rows(OverRanks& o, MPI_Comm comm) {
  constexpr int kFields = 5;  // A's rows and columns, B's rows, columns and digest
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const bool b = o.b.has_value();
  std::int64_t mine[kFields] = {o.a.rows, o.a.cols, b ? o.b->rows : -1, b ? o.b->cols : -1, 0};
  std::vector<std::int64_t> all(static_cast<std::size_t>(kFields * ranks));
  if (b && ranks > 1) mine[4] = digest(*o.b);
  MPI_Allgather(mine, kFields, MPI_INT64_T, all.data(), kFields, MPI_INT64_T, comm);
  bool same = true, same_b = true;
  std::string list;
  o.ranks = ranks;
  o.rows = {comm, std::vector<std::int64_t>(static_cast<std::size_t>(ranks) + 1, 0)};
  o.b_rows = o.rows;
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t* e = all.data() + kFields * q;
    same = same && e[1] == mine[1];
    same_b = same_b && e[3] == all[3] && (o.spread_b() || e[2] == all[2]);
    list += (q ? ", " : "") + std::to_string(e[1]);
    o.rows.firsts[static_cast<std::size_t>(q) + 1] = o.rows.firsts[static_cast<std::size_t>(q)] + e[0];
    o.b_rows.firsts[static_cast<std::size_t>(q) + 1] =
        o.b_rows.firsts[static_cast<std::size_t>(q)] + std::max<std::int64_t>(e[2], 0);
  }
  if (!same)
    throw std::invalid_argument("A: " + std::to_string(mine[1]) +
                                " columns, expected the same on every rank (rank by rank: [" + list + "])");
  if (!same_b)
    throw std::invalid_argument(o.spread_b()
                                    ? "B: columns differ between the ranks, expected the columns of A on every rank"
                                    : "B: shapes differ between the ranks, expected B whole on every rank");
  check_b_form(o, all, kFields);
  o.whole = o.a;
  o.whole.rows = o.rows.total();
  if (!o.b) return;
  o.whole_b = *o.b;
  if (o.spread_b()) o.whole_b.rows = o.b_rows.total();
}

void agree_params(const OverRanks& o, MPI_Comm comm) {
  const ComputeParams& p = o.p;
  std::uint64_t at_least = p.count_at_least.size();  // a digest of the thresholds
  for (double t : p.count_at_least) at_least = at_least * 1099511628211ull + static_cast<std::uint64_t>(bits_of(t));
  agree_same(comm, {{"similarity", static_cast<std::int64_t>(p.similarity)},
                    {"dense", p.dense},
                    {"prune", p.prune},
                    {"triangle", p.upper},
                    {"distribution", static_cast<std::int64_t>(p.distribution)},
                    {"ring_schedule", static_cast<std::int64_t>(p.ring_schedule)},
                    {"top_k", p.top_k},
                    {"empty_similarity", bits_of(p.empty_similarity)},
                    {"tversky_alpha", bits_of(p.tversky_alpha)},
                    {"tversky_beta", bits_of(p.tversky_beta)},
                    {"top_k_min", bits_of(p.top_k_min)},
                    {"pairs_min", p.pairs ? bits_of(p.pairs_min) : -1},
                    {"count_at_least", static_cast<std::int64_t>(at_least)},
                    {"slice_rows", o.auto_rows ? -1 : p.slice_rows}});
}

void agree_plan(OverRanks& o, MPI_Comm comm) {
  double worst[2] = {-o.budget, o.dense_bytes};
  MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, comm);
  const double budget = -worst[0], room = budget - worst[1];
  const std::string limit = "memory_budget " + format_bytes(budget) +
                            (worst[1] > 0 ? " less dense C " + format_bytes(worst[1]) : std::string());
  if (room <= 0) throw BudgetError("gram: " + limit + " leaves nothing for the plan (dense=False computes without C)");
  o.p.memory_budget = room;
  if (o.rows.total() == 0 || o.targets() == 0) return;  // no slices to plan
  double held = 0;
  try {
    held = planned_bytes(o.ranks, o.whole, o.whole_bm(), o.p);
  } catch (const UsageError& e) {  // no slice height fits
    std::string why = e.what();    // "gram.memory_budget: <GiB> cannot hold ...": the deck's words
    const std::size_t at = why.find("cannot hold");
    throw BudgetError("gram: " + limit + " " + (at == std::string::npos ? "is too small: " + why : why.substr(at)) +
                      "; nothing was allocated");
  }
  if (!o.auto_rows && held > room)
    throw std::invalid_argument("slice_rows: got " + std::to_string(o.p.slice_rows) + ", expected a height within " +
                                limit + " (the plan per rank needs " + format_bytes(held) + ")");
}

}  // namespace kmini::gram
