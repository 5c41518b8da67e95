// gram's plan: slice height and rank of every slice, memory per rank (what
// --dry-run prints of it: gram_plan_report.cpp).
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace kmini::gram {

// --- plan -------------------------------------------------------------------

double slice_bytes_per_row(const Config& c, bool host) {
  // A pruned slice (gram.prune): its rows gathered in popcount order, and its
  // hits (i, j, value; sorted on the host) at up to one pair in kPrunedHitShare.
  if (prune_minimum(c) > 0)
    return double(words_allocated(c.a.cols)) * sizeof(Word) + 8.0 +
           double(c.targets()) / double(kPrunedHitShare) * (24.0 + 48.0);
  // Counts (int32), and the float32 values of a dense similarity output.
  double bytes = c.float_values() && !c.write_c.empty() ? 8.0 : 4.0;
  // The pairs buffer: a sixteenth of the slice in records of 24 bytes on the
  // device (i, j, value in double), packed into 20-byte records on the host.
  if (!c.write_pairs.empty()) bytes += (24.0 + (host ? 20.0 : 0.0)) / 16;
  // Host copies of the 4-byte values: the written block and its mirror (or
  // packed upper rows) with write.C, else the rows checked.
  if (host) bytes += c.write_c.empty() ? 4.0 : 8.0;
  return double(c.targets()) * bytes;
}

std::int64_t pair_buffer_records(std::int64_t height, std::int64_t width) {
  return std::max<std::int64_t>(1, (height * width + 15) / 16);
}

std::int64_t pair_buffer_records(const Config& c, const Plan& plan) {
  constexpr std::int64_t kPrunedPairPiece = 1 << 16;
  const std::int64_t dense = pair_buffer_records(plan.height, plan.targets);
  return prune_minimum(c, plan) > 0 ? std::min(kPrunedPairPiece, dense) : dense;
}

namespace {

using detail::kMaxSlices;

// Packed A and B, and the top-k lists (with their host copies for the merge
// on host backends): what every rank holds besides one slice.
double fixed_bytes(const Config& c, bool host) {
  double bytes = double(c.a.rows + c.b.rows) * double(words_allocated(c.a.cols)) * sizeof(Word);
  if (!c.write_top_k.empty()) bytes += double(c.a.rows) * double(c.top_k) * (host ? 16.0 + 16.0 + 12.0 : 16.0);
  return bytes;
}

}  // namespace

namespace {

// Ring: `rows` rows in chunks of `height`, chunk c held by owner(c); each
// rank's chunks packed one after the other in row order.
template <class Owner>
std::vector<Chunk> make_chunks(std::int64_t rows, std::int64_t height, int ranks, Owner owner) {
  std::vector<Chunk> chunks;
  std::vector<std::int64_t> next(static_cast<std::size_t>(ranks), 0);
  for (std::int64_t r0 = 0, c = 0; r0 < rows; r0 += height, ++c) {
    Chunk k;
    k.r0 = r0;
    k.r1 = std::min(rows, r0 + height);
    k.rank = owner(c);
    k.local = next[static_cast<std::size_t>(k.rank)];
    next[static_cast<std::size_t>(k.rank)] += k.rows();
    chunks.push_back(k);
  }
  return chunks;
}

std::int64_t held_rows(const std::vector<Chunk>& chunks, int rank) {
  std::int64_t n = 0;
  for (const auto& k : chunks)
    if (k.rank == rank) n += k.rows();
  return n;
}

// Whether the replicated plan fits the budget: packed A (and B), the top-k
// lists and a slice (the deck's row_slice, else one tile of rows).
bool replicated_fits(const Config& c) {
  const bool host = compat::device_is_host_accessible;
  const std::int64_t h = std::min(c.row_slice > 0 ? c.row_slice : Tuning::tile, c.a.rows);
  return fixed_bytes(c, host) + double(h) * slice_bytes_per_row(c, host) <= c.memory_budget;
}

}  // namespace

const char* ring_schedule_name(RingSchedule s) {
  switch (s) {
    case RingSchedule::Circulant: return "circulant";
    case RingSchedule::Slices: return "slices";
    default: return "auto";
  }
}

const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::Ring: return "ring";
    case Distribution::Auto: return "auto";
    default: return "replicated";
  }
}

std::int64_t Plan::a_held(int rank) const { return ring() ? held_rows(a_chunks, rank) : rows; }
std::int64_t Plan::b_held(int rank) const { return ring() ? held_rows(b_chunks, rank) : b_rows; }

Plan make_plan_for(const Config& c, int ranks, Distribution d);

Plan make_plan(const Config& c, int ranks) {
  if (c.distribution != Distribution::Auto) return make_plan_for(c, ranks, c.distribution);
  // auto: replicated while packed A (and B), the top-k lists and a slice fit
  // the budget, else ring.
  Plan p = make_plan_for(c, ranks, replicated_fits(c) ? Distribution::Replicated : Distribution::Ring);
  p.automatic = true;
  return p;
}

std::pair<std::int64_t, std::int64_t> Plan::piece(int q, std::int64_t j, bool two_inputs) const {
  const std::int64_t n = two_inputs ? b_rows : rows;
  const std::int64_t end = block_begin(n, ranks, q + 1),
                     first = std::min(end, block_begin(n, ranks, q) + j * piece_rows);
  return {first, std::min(end, first + piece_rows)};
}

void Plan::circulant_windows(int rank, std::int64_t j, std::int64_t t, bool two_inputs,
                             std::vector<CirculantWindow>& out) const {
  out.clear();
  const int q = static_cast<int>((rank + t) % ranks);
  auto [c0, c1] = piece(q, j, two_inputs);
  if (c0 >= c1) return;
  const auto first = slices.begin() + static_cast<std::ptrdiff_t>(first_slice[static_cast<std::size_t>(rank)]);
  const auto end = slices.begin() + static_cast<std::ptrdiff_t>(first_slice[static_cast<std::size_t>(rank) + 1]);
  const auto index = [&](auto s) { return static_cast<std::size_t>(s - slices.begin()); };
  if (two_inputs) {  // every row of this rank's block against the piece of B
    for (auto s = first; s != end; ++s) out.push_back({s->r0, s->r1, c0, c1, false, false, 0, index(s)});
    return;
  }
  if (t == 0) {
    // The diagonal block, piece by piece: its own piece's slices (slices are
    // cut inside pieces) triangular up to the piece's end; the slices of earlier
    // pieces against the piece, a rectangle. Both mirror into the own lists.
    for (auto s = first; s != end && s->r0 < c1; ++s)
      out.push_back(s->r0 >= c0 ? CirculantWindow{s->r0, s->r1, s->r0, c1, true, true, 0, index(s)}
                                : CirculantWindow{s->r0, s->r1, c0, c1, false, true, 0, index(s)});
    return;
  }
  // Block pair (rank, q), once over the ranks: when P is even, step P/2 meets
  // every pair from both sides, so rank r < P/2 takes the first half of q's
  // columns and rank q the rows of the second half of its block against all of r's.
  std::int64_t rows0 = block_begin(this->rows, ranks, rank), rows1 = block_begin(this->rows, ranks, rank + 1);
  if (ranks % 2 == 0 && 2 * t == ranks) {
    if (rank < ranks / 2) {
      const std::int64_t q0 = block_begin(this->rows, ranks, q), q1 = block_begin(this->rows, ranks, q + 1);
      c1 = std::min(c1, q0 + (q1 - q0) / 2);
      if (c0 >= c1) return;
    } else {
      rows0 += (rows1 - rows0) / 2;
    }
  }
  for (auto s = first; s != end; ++s) {
    const std::int64_t r0 = std::max(s->r0, rows0), r1 = std::min(s->r1, rows1);
    if (r0 < r1) out.push_back({r0, r1, c0, c1, false, true, t, index(s)});
  }
}

namespace {

// Circulant (gram.ring_schedule): blocks of rows per rank, pieces, the slices
// of each rank's rows (inside pieces with one input, so the diagonal's
// windows stay inside one piece) and their work.
void circulant_slices(const Config& c, int ranks, Plan& p);

void plan_circulant(const Config& c, int ranks, Plan& p) {
  const bool two = c.two_inputs(), host = compat::device_is_host_accessible;
  const double row_bytes = double(p.words) * sizeof(Word);
  const std::int64_t tile = Tuning::tile;
  p.schedule = RingSchedule::Circulant;
  p.ranks = ranks;
  const std::int64_t travelling = two ? c.b.rows : p.rows;
  const std::int64_t block = (travelling + ranks - 1) / ranks, a_block = (p.rows + ranks - 1) / ranks;
  // Pieces of at most kCirculantPieceBytes and a quarter of a block (small
  // inputs still travel in several), whole tiles where they are that tall.
  // Pieces of kCirculantPieceBytes but at least 4 tiles of rows (wide rows),
  // at most a quarter of a block (small inputs still travel in several),
  // whole tiles where they are that tall.
  std::int64_t pr =
      std::min(std::max(static_cast<std::int64_t>(kCirculantPieceBytes / row_bytes), 4 * tile), (block + 3) / 4);
  if (pr >= tile) pr = pr / tile * tile;
  p.piece_rows = std::max<std::int64_t>(1, pr);
  p.pieces_per_block = (block + p.piece_rows - 1) / p.piece_rows;
  p.steps = two ? ranks : ranks / 2 + 1;
  p.message_rows = ranks > 1 ? p.piece_rows : 0;
  p.packed_bytes = double(a_block + (two ? block : 0) + 2 * p.message_rows) * row_bytes;
  // The own rows' lists (+ on host backends their host copy and the merged
  // partners' lists), and the partner piece's lists (+ their host copy and
  // the message buffers).
  p.top_k_bytes = 0;
  if (!c.write_top_k.empty())
    p.top_k_bytes =
        double(c.top_k) * sizeof(double) * 2 *
        (double(a_block) * (host ? 3 : 1) + (two || p.steps < 2 ? 0.0 : double(p.piece_rows) * (host ? 4 : 3)));
  // Window counts: h x piece rows int32.
  const double per_row = double(p.piece_rows) * 4;
  if (c.row_slice > 0) {
    p.height = std::min(c.row_slice, p.rows);
  } else {
    const double room = c.memory_budget - p.packed_bytes - p.top_k_bytes;
    std::int64_t h = room > 0 ? static_cast<std::int64_t>(room / per_row) : 0;
    if (h >= tile) h = h / tile * tile;
    // Host backends: windows about square (h = the piece's rows); GPUs: as
    // tall as the budget allows, up to the block (more tiles per launch).
    p.height = std::min({h, host ? std::max(tile, p.piece_rows) : a_block, a_block});
    if (p.height < 1)
      throw UsageError("gram.memory_budget: " + format_bytes(c.memory_budget) + " cannot hold a 1/" +
                       std::to_string(ranks) + " share of packed A" + (two ? " and B" : "") + " and two pieces (" +
                       format_bytes(p.packed_bytes) + ")" +
                       (p.top_k_bytes > 0 ? ", the top-k lists (" + format_bytes(p.top_k_bytes) + ")" : std::string()) +
                       " and one row of a window (" + format_bytes(per_row) + ")");
  }
  p.slice_bytes = double(p.height) * per_row;
  circulant_slices(c, ranks, p);
}

// Circulant: each rank's block (its chunk of A, of B), cut into slices of
// the plan's height, and each slice's work from the windows its rows are in.
void circulant_slices(const Config& c, int ranks, Plan& p) {
  const bool two = c.two_inputs();
  p.a_chunks.clear();
  p.b_chunks.clear();
  p.slices.clear();
  p.first_slice.assign(1, 0);
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t b0 = Plan::block_begin(p.rows, ranks, q), b1 = Plan::block_begin(p.rows, ranks, q + 1);
    p.a_chunks.push_back({b0, b1, q, 0});
    if (two)
      p.b_chunks.push_back({Plan::block_begin(c.b.rows, ranks, q), Plan::block_begin(c.b.rows, ranks, q + 1), q, 0});
    // Slices of h rows, restarting at every piece of the block (one input).
    const std::int64_t cut = two ? std::max<std::int64_t>(1, b1 - b0) : p.piece_rows;
    std::int64_t round = 0;
    for (std::int64_t at = b0; at < b1; at += cut)
      for (std::int64_t r0 = at; r0 < std::min(b1, at + cut); r0 += p.height) {
        Slice s;
        s.r0 = r0;
        s.r1 = std::min({b1, at + cut, r0 + p.height});
        s.rank = q;
        s.round = round++;
        p.slices.push_back(s);
      }
    p.first_slice.push_back(p.slices.size());
  }
  if (p.rows > 0 && static_cast<std::int64_t>(p.slices.size()) > kMaxSlices)
    throw UsageError(std::string(c.row_slice > 0 ? "gram.row_slice" : "gram.memory_budget") + ": slices of " +
                     std::to_string(p.height) + " rows make more than " + std::to_string(kMaxSlices) + " slices");
  // Each window's tiles to the slice its rows are in.
  std::vector<CirculantWindow> windows;
  for (int q = 0; q < ranks; ++q)
    for (std::int64_t j = 0; j < p.pieces_per_block; ++j)
      for (std::int64_t t = 0; t < p.steps; ++t) {
        p.circulant_windows(q, j, t, two, windows);
        for (const auto& w : windows) {
          p.slices[w.slice].work += detail::tile_window(w).executed_words(p.words);
        }
      }
}

}  // namespace

namespace {
std::int64_t slice_height(const Config& c, int ranks, bool ring, double per_row, const Plan& p);
void deal_slices(const Config& c, int ranks, Plan& p);
void plan_ring(const Config& c, int ranks, Plan& p);
void ring_work(const Config& c, Plan& p);
}  // namespace

Plan make_plan_for(const Config& c, int ranks, Distribution d) {
  Plan p;
  p.distribution = d;
  p.b_rows = c.b.rows;
  p.rows = c.a.rows;
  p.cols = c.a.cols;
  p.targets = c.targets();
  p.words = words_allocated(c.a.cols);
  p.packed_bytes = double(p.rows + c.b.rows) * double(p.words) * sizeof(Word);
  const bool host = compat::device_is_host_accessible;
  p.top_k_bytes = fixed_bytes(c, host) - p.packed_bytes;
  const double per_row = slice_bytes_per_row(c, host);
  const bool ring = d == Distribution::Ring;
  if (ring && (c.ring_schedule == RingSchedule::Circulant ||
               (c.ring_schedule == RingSchedule::Auto && c.circulant_possible()))) {
    plan_circulant(c, ranks, p);
    return p;
  }
  p.height = slice_height(c, ranks, ring, per_row, p);
  p.slice_bytes = double(p.height) * per_row;
  deal_slices(c, ranks, p);
  if (ring) plan_ring(c, ranks, p);
  return p;
}

namespace {

// The slice height: the deck's, else the tallest the budget holds (ring: a
// 1/P share of the inputs held), balanced over the ranks.
std::int64_t slice_height(const Config& c, int ranks, bool ring, double per_row, const Plan& p) {
  const std::int64_t tile = Tuning::tile;
  const double row_bytes = double(p.words) * sizeof(Word);
  if (c.row_slice > 0) return std::min(c.row_slice, p.rows);
  // Ring: a 1/P share of A (and B), plus per row of the slice a row of
  // each input held past the share (chunks round up) and two receive buffers.
  const double room = ring ? c.memory_budget - p.packed_bytes / ranks - p.top_k_bytes
                           : c.memory_budget - p.packed_bytes - p.top_k_bytes;
  const double per = ring ? per_row + row_bytes * (3 + (c.two_inputs() ? 1 : 0)) : per_row;
  std::int64_t h = room > 0 ? static_cast<std::int64_t>(room / per) : 0;
  if (h >= tile) h = h / tile * tile;
  // Enough slices to keep every rank busy, when the budget allows more.
  const std::int64_t balanced = std::max<std::int64_t>(tile, (p.rows / (4 * ranks) + tile - 1) / tile * tile);
  if (ranks > 1) h = std::min(h, balanced);
  h = std::min(h, p.rows);
  if (h < 1)
    throw UsageError("gram.memory_budget: " + format_bytes(c.memory_budget) + " cannot hold " +
                     (ring ? "a 1/" + std::to_string(ranks) + " share of packed A" : std::string("packed A")) +
                     (c.two_inputs() ? " and B (" : " (") +
                     format_bytes(ring ? p.packed_bytes / ranks : p.packed_bytes) + ")" +
                     (p.top_k_bytes > 0 ? ", the top-k lists (" + format_bytes(p.top_k_bytes) + ")" : std::string()) +
                     " and one row of C (" + format_bytes(per_row) + ")");
  return h;
}

// Rounds of `ranks` consecutive slices, one per rank (the sparse outputs
// stream each round's pairs in row order). Inside a round the heaviest
// slice goes to the least-loaded rank so far: the triangular work shrinks
// along the rows, so this alternates early and late slices per rank.
void deal_slices(const Config& c, int ranks, Plan& p) {
  const std::int64_t count = p.rows / p.height + (p.rows % p.height ? 1 : 0);
  if (count > kMaxSlices)  // the plan lists every slice: 2^31 rows in slices of 8 took minutes
    throw UsageError(std::string(c.row_slice > 0 ? "gram.row_slice" : "gram.memory_budget") + ": slices of " +
                     std::to_string(p.height) + " rows make " + std::to_string(count) + " slices of " +
                     std::to_string(p.rows) + " rows, expected at most " + std::to_string(kMaxSlices) +
                     (c.row_slice > 0 ? " (a taller row_slice)" : " (a larger memory_budget)"));
  std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
  for (std::int64_t r0 = 0; r0 < p.rows; r0 += p.height) {
    Slice s;
    s.r0 = r0;
    s.r1 = std::min(p.rows, r0 + p.height);
    s.round = static_cast<std::int64_t>(p.slices.size()) / ranks;
    s.work = SliceGeometry{p.rows, s.r0, s.r1, c.two_inputs() ? p.targets : 0}.executed_words(p.words);
    p.slices.push_back(s);
  }
  for (std::size_t first = 0; first < p.slices.size(); first += static_cast<std::size_t>(ranks)) {
    const std::size_t end = std::min(p.slices.size(), first + static_cast<std::size_t>(ranks));
    std::vector<std::size_t> order;
    for (std::size_t i = first; i < end; ++i) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return p.slices[x].work > p.slices[y].work; });
    std::vector<bool> taken(static_cast<std::size_t>(ranks), false);
    for (std::size_t i : order) {
      int best = -1;
      for (int q = 0; q < ranks; ++q)
        if (!taken[static_cast<std::size_t>(q)] &&
            (best < 0 || load[static_cast<std::size_t>(q)] < load[static_cast<std::size_t>(best)]))
          best = q;
      taken[static_cast<std::size_t>(best)] = true;
      p.slices[i].rank = best;
      load[static_cast<std::size_t>(best)] += p.slices[i].work;
    }
  }
}

// Ring: each rank holds the rows of its slices (A's chunks are the slices),
// and B in chunks of the same height dealt round robin. Memory per rank:
// the busiest holder's rows and two receive buffers of the tallest
// travelling chunk.
void plan_ring(const Config& c, int ranks, Plan& p) {
  const double row_bytes = double(p.words) * sizeof(Word);
  p.a_chunks =
      make_chunks(p.rows, p.height, ranks, [&](std::int64_t k) { return p.slices[static_cast<std::size_t>(k)].rank; });
  if (c.two_inputs())
    p.b_chunks = make_chunks(c.b.rows, p.height, ranks, [&](std::int64_t k) { return static_cast<int>(k % ranks); });
  const auto& travelling = p.travelling(c.two_inputs());
  std::int64_t tallest = 0;
  for (const auto& k : travelling) tallest = std::max(tallest, k.rows());
  // At most kRingPieceBytes and a quarter of a rank's share (small inputs would
  // otherwise travel whole: three shares per rank), one chunk at least.
  std::int64_t total_rows = 0;
  for (const auto& k : travelling) total_rows += k.rows();
  const std::int64_t piece_rows = std::max(tallest, std::min(static_cast<std::int64_t>(kRingPieceBytes / row_bytes),
                                                             (total_rows + 4 * ranks - 1) / (4 * ranks)));
  p.holdings.assign(static_cast<std::size_t>(ranks), {});
  p.pieces.assign(static_cast<std::size_t>(ranks), {});
  for (std::size_t i = 0; i < travelling.size(); ++i)
    p.holdings[static_cast<std::size_t>(travelling[i].rank)].push_back(i);
  for (int q = 0; q < ranks; ++q) {
    const auto& mine = p.holdings[static_cast<std::size_t>(q)];
    for (std::size_t b = 0; b < mine.size();) {
      std::size_t e = b;
      std::int64_t n = 0;
      while (e < mine.size() && (e == b || n + travelling[mine[e]].rows() <= piece_rows))
        n += travelling[mine[e++]].rows();
      p.pieces[static_cast<std::size_t>(q)].emplace_back(b, e);
      p.message_rows = std::max(p.message_rows, n);
      b = e;
    }
  }
  std::int64_t most = 0;
  for (int q = 0; q < ranks; ++q) most = std::max(most, p.a_held(q) + p.b_held(q));
  p.packed_bytes = double(most + 2 * p.message_rows) * row_bytes;
  ring_work(c, p);
}

// The tiles a ring slice executes: its own chunk (triangular with one
// input) and the rectangles of the columns it needs from each chunk.
void ring_work(const Config& c, Plan& p) {
  const auto& travelling = p.travelling(c.two_inputs());
  for (auto& s : p.slices) {
    s.work = 0;
    for (const auto& k : travelling) {
      TileWindow w;
      w.r0 = s.r0;
      w.r1 = s.r1;
      if (c.two_inputs()) {
        w.c0 = k.r0;
        w.c1 = k.r1;
      } else if (k.r1 <= s.r0) {
        continue;
      } else {
        w.c0 = k.r0;
        w.c1 = k.r1;
        w.triangular = k.r0 == s.r0;
      }
      s.work += w.executed_words(p.words);
    }
  }
}

}  // namespace

}  // namespace kmini::gram
