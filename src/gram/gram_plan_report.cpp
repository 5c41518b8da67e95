// What --dry-run prints of gram's plan (gram_plan.cpp): the sizes, the memory
// per rank, both distributions' costs, the files read and written.
#include "core/format.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

namespace kmini::gram {
namespace {

using detail::gib;

// --dry-run: both distributions' costs, and the one auto picks (a plan the
// budget cannot hold says so).
void print_distributions(std::ostream& os, const Config& c, const Plan& p, int ranks) {
  os << "    distribution: " << distribution_name(p.distribution) << (p.automatic ? " (gram.distribution: auto)" : "")
     << "\n";
  Config automatic = c;
  automatic.distribution = Distribution::Auto;
  for (Distribution d : {Distribution::Replicated, Distribution::Ring}) {
    os << "      " << (d == Distribution::Ring ? "ring:       " : "replicated: ");
    try {
      const Plan q = make_plan_for(c, ranks, d);
      const DistributionCost cost = distribution_cost(c, q, ranks);
      os << "held " << gib(cost.held_bytes) << " per rank (packed " << gib(q.packed_bytes) << "), sent "
         << gib(cost.sent_bytes) << " per rank, " << cost.rounds << " round(s)";
      if (q.circulant())
        os << ", circulant: each rank pairs its block of A with "
           << (c.two_inputs() ? "every block of B" : "block r + s") << " in windows of " << q.height << " x "
           << q.piece_rows << ", " << q.pieces_per_block << " piece(s) of " << q.piece_rows
           << " rows per block, each block travelling once"
           << (c.two_inputs() || c.write_top_k.empty() ? "" : "; top-k lists of its own rows");
      else if (d == Distribution::Ring)
        os << " of " << ranks << " step(s) (" << q.travelling(c.two_inputs()).size() << " chunk(s) of "
           << (c.two_inputs() ? "B" : "A") << " travel each round"
           << (c.ring_schedule == RingSchedule::Slices ? "" : "; slices: write.C or write.pairs") << ")";
      else
        os << (c.a.kind == Source::Kind::Random && (c.b.rows == 0 || c.b.kind == Source::Kind::Random)
                   ? " (random inputs are generated whole on every rank)"
                   : " (the packed rows read are allgathered once)");
      os << "\n";
    } catch (const UsageError& e) {
      os << "does not fit: " << e.what() << "\n";
    }
  }
  try {
    os << "      auto picks: " << distribution_name(make_plan(automatic, ranks).distribution) << "\n";
  } catch (const UsageError&) {
    os << "      auto picks: neither fits gram.memory_budget\n";
  }
}

// --dry-run: the input files read and the outputs written.
void print_files(std::ostream& os, const Config& c, const Plan& p, int ranks) {
  const double pairs = c.two_inputs() ? double(p.rows) * double(p.targets) : double(p.rows) * double(p.rows - 1) / 2;
  for (const auto& [name, src] : {std::make_pair("A", &c.a), std::make_pair("B", &c.b)}) {
    if (src->kind == Source::Kind::Random || src->rows == 0) continue;
    if (p.ring()) {
      os << "    read " << name << ": " << format_bytes(double(src->rows) * detail::file_bytes_per_row(*src))
         << " from " << src->path << ", each rank reads the rows it holds (pread)\n";
      continue;
    }
    // Each rank reads a disjoint block of rows (pread); the packed rows are allgathered.
    const double row_bytes = detail::file_bytes_per_row(*src);
    const double most = double(detail::read_share(src->rows, 0, ranks).count) * row_bytes;
    os << "    read " << name << ": " << format_bytes(double(src->rows) * row_bytes) << " from " << src->path
       << ", at most " << format_bytes(most) << " per rank (rows split over " << ranks << " rank(s), "
       << "pread), then packed rows allgathered ("
       << format_bytes(double(src->rows) * double(words_allocated(src->cols)) * sizeof(Word)) << " on every rank)\n";
  }
  if (!c.write_c.empty())
    os << "    write.C " << c.write_c << ": "
       << gib((c.upper ? double(p.rows) * double(p.rows + 1) / 2 : double(p.rows) * double(p.targets)) * 4) << "\n";
  if (!c.write_top_k.empty())
    os << "    write.top_k " << c.write_top_k << ": " << p.rows << " x " << c.top_k << " partners, "
       << gib(double(p.rows) * double(c.top_k) * 12) << "\n";
  if (!c.write_pairs.empty())
    os << "    write.pairs " << c.write_pairs << ": pairs with value >= " << format_number(c.pairs_min) << ", at most "
       << format_number(pairs) << " (" << gib(pairs * 20) << "), streamed through a buffer of "
       << pair_buffer_records(c, p) << " per slice\n";
  if (!c.count_at_least.empty())
    os << "    count_at_least: " << c.count_at_least.size() << " threshold(s) over " << format_number(pairs)
       << " pairs\n";
}

}  // namespace

void GramKernel::print_plan(std::ostream& os, const Environment& env) const {
  const Plan p = make_plan(config_, env.size());
  const Config& c = config_;
  double total = 0;
  std::vector<double> per_rank(static_cast<std::size_t>(env.size()), 0.0);
  for (const auto& s : p.slices) {
    total += s.work;
    per_rank[static_cast<std::size_t>(s.rank)] += s.work;
  }
  auto describe = [](const Source& a) {
    return a.kind == Source::Kind::Random ? "random, density " + format_number(a.density)
                                          : a.path + (a.kind == Source::Kind::Packed ? ", packed" : "");
  };
  const double useful = double(p.rows) * double(p.targets) * double(p.cols);
  os << "gram: A " << p.rows << " x " << p.cols << " (" << describe(c.a) << ")";
  if (c.two_inputs()) os << " x B " << c.b.rows << " x " << c.b.cols << " (" << describe(c.b) << "): C = A B^T";
  os << ", " << similarity_name(c.similarity);
  if (c.similarity == Similarity::Tversky)
    os << " (alpha " << format_number(c.tversky_alpha) << ", beta " << format_number(c.tversky_beta) << ")";
  const double prune = prune_minimum(c, p);
  os << ", "
     << (prune > 0        ? "tiles whose bound is below " + format_number(prune) + " skipped"
         : c.two_inputs() ? "all tiles"
         : c.upper        ? "upper triangle"
                          : "full triangle");
  if (!c.self_cols.empty()) os << ", each query's own ID left out";
  os << "\n"
     << "    packed " << (c.two_inputs() ? "A and B " : "A ") << gib(p.packed_bytes) << " per rank"
     << (p.circulant() ? " (ring, circulant: its block and two piece buffers)"
         : p.ring()    ? " (ring: the rows it holds and two receive buffers)"
                       : "")
     << (p.top_k_bytes > 0 ? ", top-k lists " + gib(p.top_k_bytes) : std::string()) << "; " << p.slices.size()
     << " row slice(s) of " << p.height << " rows in " << p.rounds() << " round(s), " << gib(p.slice_bytes)
     << " each; device memory per rank " << gib(p.packed_bytes + p.top_k_bytes + p.slice_bytes) << " of budget "
     << gib(c.memory_budget) << "\n"
     << "    work: " << format_number(useful) << " useful bit-ops (rows x targets x cols), "
     << format_number(total * 64) << " executed (" << (c.two_inputs() ? "all" : "upper") << " tiles); busiest rank "
     << format_number(*std::max_element(per_rank.begin(), per_rank.end()) / total * 100) << "% of it\n";
  print_distributions(os, c, p, env.size());
  print_files(os, c, p, env.size());
}

}  // namespace kmini::gram
