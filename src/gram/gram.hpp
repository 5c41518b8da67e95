#pragma once
// Bit-packed Gram product C = A * A^T of a 0/1 matrix A (rows x cols), or
// C = A * B^T of queries A against targets B: C(i, j) = number of columns
// where row i of A and row j of B (of A) are both 1. Computed in row slices
// of C shared across ranks, with AND+popcount on 64-bit words; the outputs
// (dense C, summary, pairs above a minimum, top-k partners, counts above
// thresholds) are produced slice by slice.
#include "gram/gram_params.hpp"
#include "gram/gram_similarity.hpp"
#include "io/fps.hpp"
#include "kernel/kernel.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kmini::gram {

// Where A comes from. Fps: a fingerprint file (io/fps.hpp), its index
// (records' offsets and IDs) read once when the deck is configured.
struct Source {
  enum class Kind { Random, Unpacked, Packed, Fps } kind = Kind::Random;
  std::int64_t rows = 0, cols = 0;
  double density = 0.5;    // random
  std::uint64_t seed = 1;  // random
  std::string path;        // unpacked / packed .npy, or .fps
  std::uint64_t data_offset = 0;
  bool bool_dtype = false;
  std::shared_ptr<const fps::Index> fps;  // Fps
  // The name of row i in text outputs: its ID (Fps), else the row number.
  std::string row_id(std::int64_t i) const { return fps ? fps->ids[static_cast<std::size_t>(i)] : std::to_string(i); }
};

// gram.distribution: every rank holds all of packed A (and B), or a 1/P
// share of the rows with the other shares travelling a ring of the ranks.
enum class Distribution { Replicated, Ring, Auto };
const char* distribution_name(Distribution d);
// gram.ring_schedule: how the ring computes. `slices`: the replicated plan's
// slices, the chunks of A (of B) passing every rank once per round of slices
// (every output). `circulant`: rank r holds block r of A (and of B) and pairs
// it with block r + s, s = 0 .. P/2 (the last round split in half when P is
// even; with B every block of B, s = 0 .. P - 1), each block travelling once,
// computed in windows of h rows x one piece of the block in hand; the outputs
// that reduce per row (top-k lists of the rank's own rows, count_at_least, the
// summary) only: not write.C or write.pairs. auto: circulant where it can.
enum class RingSchedule { Auto, Slices, Circulant };
const char* ring_schedule_name(RingSchedule s);

struct Config {
  Source a;
  Source b;                                    // targets; b.rows == 0: none (C = A A^T)
  std::int64_t row_slice = 0;                  // 0: auto
  double memory_budget = 0;                    // bytes of device memory for packed A + one slice
  bool budget_given = false;                   // memory_budget set in the deck (not auto)
  Similarity similarity = Similarity::Counts;  // counts: int32 values, else float32
  double empty_similarity = 0;                 // the similarity of two empty rows (0/0)
  double tversky_alpha = 1, tversky_beta = 1;  // similarity tversky's weights (gram.tversky)
  SimilarityParams similarity_params() const { return {empty_similarity, tversky_alpha, tversky_beta}; }
  // gram.exclude_self (with B): for each row of A the row of B with its ID,
  // or -1; the sparse outputs leave that pair out. Empty: nothing left out.
  std::vector<std::int64_t> self_cols;
  bool upper = false;  // triangle: upper (packed rows i, j >= i)
  std::string write_c, write_summary;
  std::string write_pairs;  // pairs with value >= pairs_min
  double pairs_min = 0;
  std::string write_top_k;  // the top_k best partners of every row of A
  // The same as tab-separated text with the rows' IDs (gram_text.cpp); optional.
  std::string write_pairs_text, write_top_k_text;
  std::string write_top_k_simsearch;  // the lists in chemfp's simsearch format (gram_text.cpp); optional
  std::int64_t top_k = 0;
  double top_k_min = 0;                // the lists keep only partners with a value >= this (0: all)
  std::vector<double> count_at_least;  // thresholds (in the deck's order)
  bool two_inputs() const { return b.rows > 0; }
  bool float_values() const { return similarity != Similarity::Counts; }
  std::int64_t targets() const { return two_inputs() ? b.rows : a.rows; }  // columns of C
  bool baseline = false;
  bool probe = false;                           // measure the roof (gram.probe): the figure of merit's fraction of it
  bool prune = false;                           // gram.prune: skip tiles below every output's minimum (prune_minimum)
  std::int64_t baseline_rows = 512;             // rows of the gemm baseline panel
  std::int64_t repeat = 1;                      // timed repetitions of the slice loop (best)
  Engine engine = Engine::Popcount;             // the tiles' sums (gram.engine; auto resolved in gram_config.cpp)
  MicroKernel micro_kernel = kAutoMicroKernel;  // the host tiles' micro-kernel (gram.micro_kernel)
  TensorCoreTile tensor_core_tile = TensorCoreTile::Auto;  // gram.tensor_core_tile
  Distribution distribution = Distribution::Replicated;    // Auto is resolved by make_plan
  RingSchedule ring_schedule = RingSchedule::Auto;         // resolved by make_plan (ring plans)
  // The circulant computes only the outputs that reduce per row.
  bool circulant_possible() const { return write_c.empty() && write_pairs.empty(); }
};

// One slice of rows of C and the rank that computes it.
struct Slice {
  std::int64_t r0 = 0, r1 = 0;
  int rank = 0;
  std::int64_t round = 0;  // slices of round k are the k-th `ranks` slices, one per rank
  double work = 0;         // word-pair popcounts executed
};

// Ring: a block of consecutive rows of A or B, held by one rank at
// `local` (its first row in that rank's packed rows). A's chunks are the
// slices: each rank holds the rows of the slices it computes.
struct Chunk {
  std::int64_t r0 = 0, r1 = 0;
  int rank = 0;
  std::int64_t local = 0;
  std::int64_t rows() const { return r1 - r0; }
};

// Ring messages carry up to this many bytes of packed rows (several chunks):
// fewer, larger messages and ticks than one per chunk, two such buffers per rank.
inline constexpr double kRingPieceBytes = 4.0 * (1 << 20);

// Circulant: one launch of the tiles and the outputs, rows [r0, r1) of A
// (this rank's block) against rows [c0, c1) of the piece in hand (global
// rows of A, or of B). triangular: the diagonal (c0 == r0), tiles on or above
// it, mirrored inside the window. mirror (one input): the columns' rows get
// C(j, i) too, into this rank's own lists (slot 0: the piece is its own) or
// the lists of the partner block's piece (slot t of step t).
struct CirculantWindow {
  std::int64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
  bool triangular = false, mirror = false;
  std::int64_t slot = 0;
  std::size_t slice = 0;  // the plan's slice (Plan::slices) its rows are in
};

// Circulant: kRingPieceBytes is too coarse for blocks that travel in pieces
// (two piece buffers and the window's counts per rank): 1 MiB of packed rows.
inline constexpr double kCirculantPieceBytes = 1.0 * (1 << 20);

struct Plan {
  std::int64_t rows = 0, cols = 0, words = 0, height = 0;
  // gram.distribution as planned: Replicated or Ring (never Auto), and
  // whether it came from auto.
  Distribution distribution = Distribution::Replicated;
  bool automatic = false;
  bool ring() const { return distribution == Distribution::Ring; }
  // Ring plans: Slices or Circulant (never Auto).
  RingSchedule schedule = RingSchedule::Slices;
  bool circulant() const { return ring() && schedule == RingSchedule::Circulant; }
  // Circulant: block q of A (of B) is rows [block_begin(q), block_begin(q + 1))
  // of `ranks` blocks, held by rank q; the blocks travel in pieces of
  // piece_rows rows (piece j of a block: its rows from j * piece_rows), the
  // most pieces of a block `pieces_per_block`; `steps`: blocks each rank sees
  // (P/2 + 1, with B: P).
  int ranks = 1;
  std::int64_t piece_rows = 0, pieces_per_block = 0, steps = 0;
  std::vector<std::size_t> first_slice;  // circulant: rank q's slices are [first_slice[q], first_slice[q + 1])
  static std::int64_t block_begin(std::int64_t n, int ranks, int q) { return n * q / ranks; }
  // Rows [first, second) of piece j of block q of the travelling matrix (empty past its end).
  std::pair<std::int64_t, std::int64_t> piece(int q, std::int64_t j, bool two_inputs) const;
  // The windows `rank` computes at step t with piece j of block rank + t in hand.
  void circulant_windows(int rank, std::int64_t j, std::int64_t t, bool two_inputs,
                         std::vector<CirculantWindow>& out) const;
  std::int64_t b_rows = 0;
  std::vector<Chunk> a_chunks, b_chunks;  // ring: who holds which rows
  std::int64_t a_held(int rank) const;    // rows of A (of B) `rank` holds (all with replicated)
  std::int64_t b_held(int rank) const;
  // The ring's chunks that travel: B's with two inputs, else A's.
  const std::vector<Chunk>& travelling(bool two_inputs) const { return two_inputs ? b_chunks : a_chunks; }
  // Ring messages: each rank's travelling chunks in row order, grouped into
  // pieces of consecutive chunks (contiguous in its packed rows) of at most
  // kRingPieceBytes (one chunk at least): pieces[rank] = [first, end) indices
  // into that rank's chunks. message_rows: the tallest piece (one receive buffer).
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>> pieces;
  std::vector<std::vector<std::size_t>> holdings;  // each rank's travelling chunks (indices), in row order
  std::int64_t message_rows = 0;
  std::int64_t targets = 0;  // columns of C: rows of B (of A with one input)
  double packed_bytes = 0;   // packed A (and B)
  double top_k_bytes = 0;    // the top-k lists (and their host copies on host backends)
  double slice_bytes = 0;
  std::vector<Slice> slices;
  // Rounds of slices (circulant: the steps, blocks each rank sees).
  std::int64_t rounds() const { return circulant() ? steps : slices.empty() ? 0 : slices.back().round + 1; }
  SliceGeometry geometry(const Slice& s, bool two_inputs) const {
    return SliceGeometry{rows, s.r0, s.r1, two_inputs ? targets : 0};
  }
};

// The memory and traffic of one distribution, per rank (the busiest rank's),
// as --dry-run prints them.
struct DistributionCost {
  double held_bytes = 0;  // device memory: inputs held, buffers, one slice, top-k lists
  double sent_bytes = 0;  // packed rows sent (replicated: the allgather of file inputs)
  std::int64_t rounds = 0;
};
DistributionCost distribution_cost(const Config& c, const Plan& p, int ranks);

// Slice height for `auto`: the largest multiple of the tile that fits the
// budget. Slices are handed out in rounds of one per rank, in row order
// (the sparse outputs are streamed in that order); inside a round the
// heaviest slice goes to the least-loaded rank.
Plan make_plan(const Config& c, int ranks);
// The plan of one distribution (Replicated or Ring), whatever the deck asks.
Plan make_plan_for(const Config& c, int ranks, Distribution d);

// Bytes per row of a slice the budget pays for: C counts (int32), the float
// slice of a dense similarity output, the pairs buffer, and, when host copies
// share that memory (host backends), the host copies of the slice for output
// and checks.
double slice_bytes_per_row(const Config& c, bool host_copies_share_memory);

// Records of the pairs buffer for a slice of `height` rows of C's `width`
// columns: a sixteenth of the slice (a slice with more pairs writes them in
// several rounds).
std::int64_t pair_buffer_records(std::int64_t height, std::int64_t width);
// The pairs buffer of `plan`: as above, or for a pruned plan (whose pairs
// come from its hits, prune_minimum) the pieces it writes them in.
std::int64_t pair_buffer_records(const Config& c, const Plan& plan);

// Everything one rank allocates at its peak for `plan`: packed A, one slice
// (with its host copies where they share the memory), row buffers, the file
// staging block, and the larger of the verification's and the baseline's
// extra matrices.
ByteCount device_bytes(const Config& c, const Plan& plan, bool verify, bool host_copies_share_memory);

// Its deck keys, figure of merit and decks (gram_declaration.cpp).
const KernelDeclaration& declaration();

// A threshold (write.pairs.min, write.count_at_least) that no value of
// `similarity` reaches selects nothing, silently: "" where `threshold` can be
// reached, else what is expected ("a value in [0, 1] (jaccard values lie in
// [0, 1])"). The CLI's deck and Python's arguments are checked by it.
std::string unreachable_threshold(Similarity similarity, double threshold);

// What keeps gram.prune from applying (None: it applies). The deck and
// Python decide it here and word it with their own names.
enum class PruneRefusal { None, OneInput, AllOfC, NoOutput, NoMinimum, Ring };
// two_inputs: B given; all_of_c: dense C or the summary asked for;
// minimums: the outputs' (pairs, top-k, each count_at_least value; a top-k
// list without one gives 0); ring: the ring distribution asked for.
PruneRefusal prune_refusal(bool two_inputs, bool all_of_c, const std::vector<double>& minimums, bool ring);

// The share of a pruned slice's pairs its hits' views are first sized for
// (1 in kPrunedHitShare; more grow them, past gram.memory_budget).
inline constexpr std::int64_t kPrunedHitShare = 64;

// The minimum a pruned search skips tiles below (gram.prune): the smallest of
// the outputs' minimums where every output has one above 0 (write.pairs.min,
// write.top_k.min, count_at_least) and none needs every value (write.C,
// write.summary), queries against targets (B); else 0, nothing pruned.
double prune_minimum(const Config& c);
// The same for `plan`: 0 where its distribution is the ring (pruning runs
// on replicated slices only).
double prune_minimum(const Config& c, const Plan& plan);

// gram.exclude_self: for each query ID the index of the same ID among the
// targets, or -1 (IDs are unique within each file).
std::vector<std::int64_t> self_columns(const std::vector<std::string>& query_ids,
                                       const std::vector<std::string>& target_ids);

// Tversky's weights that cannot be computed as asked: "" where they can (and
// for every other similarity), else what is expected: alpha + beta > 0, and
// alpha == beta with one input (A A^T computes each pair once). The CLI's
// deck and Python's arguments are checked by it.
std::string tversky_problem(Similarity similarity, const SimilarityParams& p, bool two_inputs);

class GramKernel final : public Kernel {
 public:
  const KernelDeclaration& declaration() const override { return gram::declaration(); }
  void configure(const DeckNode& section, const Environment& env) override;
  void print_plan(std::ostream& os, const Environment& env) const override;
  std::vector<MemoryNeed> memory_needs(const Environment& env, bool verify) const override;
  KernelReport run(RunContext& ctx) override;

 private:
  void check_slices(const DeckNode& section, const Environment& env);
  Config config_;
  std::string budget_setting_, size_setting_;  // where memory_budget and the plan's size come from
};

// Float/double gemm on the unpacked matrix (gram_gemm.cpp, the only file that
// includes Kokkos Kernels): C_panel = A[panel rows] * A^T. Returns seconds of
// the gemm call alone; `panel_out` (panel x rows, row major) when non-null.
double gemm_panel_float(const Source& a, std::int64_t panel, std::vector<double>* panel_out);
// The double check: out = A[panel_rows] * T^T (T = B, or A with one input), panel_rows.size() x T.rows.
double gemm_panel_double(const Source& a, const Source& t, const std::vector<std::int64_t>& panel_rows,
                         std::vector<double>& out);

// Host unpacked values of rows [r0, r0 + n) as 0/1 bytes, straight from the source.
std::vector<std::uint8_t> host_rows(const Source& a, std::int64_t r0, std::int64_t n);

}  // namespace kmini::gram
