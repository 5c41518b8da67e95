#include "gram/gram.hpp"

#include "core/collective.hpp"
#include "core/device_memory.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "core/run_loop.hpp"
#include "gram/gram_kernels.hpp"
#include "gram/gram_outputs.hpp"
#include "gram/gram_reference.hpp"
#include "gram/gram_sparse.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <sstream>

namespace kmini::gram {

namespace {

constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();
// The plan lists its slices (a few dozen bytes each): a million is ample for
// any matrix a device holds and keeps planning instant.
constexpr std::int64_t kMaxSlices = std::int64_t(1) << 20;
constexpr std::int64_t kHistogramBins = 64;
// Host reference on check rows up to this many matrix elements (bits).
constexpr double kHostReferenceLimit = 1ull << 31;
// Double gemm cross-check up to this many elements of the unpacked matrix.
constexpr double kGemmCheckLimit = 1ull << 26;
// Iterations of each worker of the AND+popcount probe: ~1 ms per worker on a
// host core, and on a GPU enough to dwarf the ~10 us launch.
constexpr int kProbeIterations = compat::device_is_host_accessible ? 20000 : 200;
// Bytes of unpacked input read per block when packing a file.
constexpr std::int64_t kReadBlockBytes = 64ll << 20;

std::string gib(double bytes) { return format_number(bytes / double(1ull << 30)) + " GiB"; }

}  // namespace

// --- plan -------------------------------------------------------------------

double slice_bytes_per_row(const Config& c, bool host) {
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

namespace {

// Packed A and B, and the top-k lists (with their host copies for the merge
// on host backends): what every rank holds besides one slice.
double fixed_bytes(const Config& c, bool host) {
  double bytes = double(c.a.rows + c.b.rows) * double(words_allocated(c.a.cols)) * sizeof(Word);
  if (!c.write_top_k.empty()) bytes += double(c.a.rows) * double(c.top_k) * (host ? 16.0 + 16.0 + 12.0 : 16.0);
  return bytes;
}

}  // namespace

Plan make_plan(const Config& c, int ranks) {
  Plan p;
  p.rows = c.a.rows;
  p.cols = c.a.cols;
  p.targets = c.targets();
  p.words = words_allocated(c.a.cols);
  p.packed_bytes = double(p.rows + c.b.rows) * double(p.words) * sizeof(Word);
  const bool host = compat::device_is_host_accessible;
  p.top_k_bytes = fixed_bytes(c, host) - p.packed_bytes;
  const double per_row = slice_bytes_per_row(c, host);
  const std::int64_t tile = TileParams::tile;
  if (c.row_slice > 0) {
    p.height = std::min(c.row_slice, p.rows);
  } else {
    const double room = c.memory_budget - p.packed_bytes - p.top_k_bytes;
    std::int64_t h = room > 0 ? static_cast<std::int64_t>(room / per_row) : 0;
    if (h >= tile) h = h / tile * tile;
    // Enough slices to keep every rank busy, when the budget allows more.
    const std::int64_t balanced = std::max<std::int64_t>(tile, (p.rows / (4 * ranks) + tile - 1) / tile * tile);
    if (ranks > 1) h = std::min(h, balanced);
    p.height = std::min(h, p.rows);
    if (p.height < 1)
      throw UsageError("gram.memory_budget: " + gib(c.memory_budget) + " cannot hold packed A" +
                       (c.two_inputs() ? " and B (" : " (") + gib(p.packed_bytes) + ")" +
                       (p.top_k_bytes > 0 ? ", the top-k lists (" + gib(p.top_k_bytes) + ")" : std::string()) +
                       " and one row of C (" + gib(per_row) + ")");
  }
  p.slice_bytes = double(p.height) * per_row;
  const std::int64_t count = p.rows / p.height + (p.rows % p.height ? 1 : 0);
  if (count > kMaxSlices)  // the plan lists every slice: 2^31 rows in slices of 8 took minutes
    throw UsageError(std::string(c.row_slice > 0 ? "gram.row_slice" : "gram.memory_budget") + ": slices of " +
                     std::to_string(p.height) + " rows make " + std::to_string(count) + " slices of " +
                     std::to_string(p.rows) + " rows, expected at most " + std::to_string(kMaxSlices) +
                     (c.row_slice > 0 ? " (a taller row_slice)" : " (a larger memory_budget)"));
  // Rounds of `ranks` consecutive slices, one per rank (the sparse outputs
  // stream each round's pairs in row order). Inside a round the heaviest
  // slice goes to the least-loaded rank so far: the triangular work shrinks
  // along the rows, so this alternates early and late slices per rank.
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
  return p;
}

ByteCount device_bytes(const Config& c, const Plan& p, bool verify, bool host) {
  const auto rows = static_cast<std::uint64_t>(p.rows), cols = static_cast<std::uint64_t>(p.cols);
  const auto targets = static_cast<std::uint64_t>(p.targets), b_rows = static_cast<std::uint64_t>(c.b.rows);
  const auto height = static_cast<std::uint64_t>(p.height);
  ByteCount bytes = ByteCount::of(rows + b_rows, static_cast<std::uint64_t>(p.words) * sizeof(Word));  // packed A, B
  bytes += ByteCount::of(height, static_cast<std::uint64_t>(slice_bytes_per_row(c, host)));           // one slice
  bytes += ByteCount::of(rows + b_rows, 4) + ByteCount::of(rows, 8) + ByteCount(kHistogramBins * 8);  // ones, row sums
  if (!c.write_top_k.empty())  // the lists (+ their host copy and records for the merge on host backends)
    bytes += ByteCount::of(rows, static_cast<std::uint64_t>(c.top_k) * (host ? 16 + 16 + 12 : 16));
  if (!c.write_pairs.empty()) bytes += ByteCount::of(height + 1, 16);  // pairs per row, offsets
  ByteCount staging;  // the file's staging block (A's is freed before B is read)
  for (const Source* s : {&c.a, &c.b}) {
    if (s->kind == Source::Kind::Random || s->rows == 0) continue;
    const std::int64_t row_bytes = s->kind == Source::Kind::Packed ? (s->cols + 7) / 8 : s->cols;
    const std::int64_t block = std::max<std::int64_t>(1, std::min(s->rows, kReadBlockBytes / row_bytes));
    staging = max(staging, ByteCount::of(static_cast<std::uint64_t>(block), static_cast<std::uint64_t>(row_bytes)));
  }
  bytes += staging;
  // Verification: the double gemm check on small matrices (all targets, <= 64
  // checked rows, their products), and the host reference on host backends.
  ByteCount extra;
  if (verify && double(targets) * double(cols) <= kGemmCheckLimit)
    extra = ByteCount::of(targets * cols + 64 * cols + 64 * targets, sizeof(double));
  if (verify && host && double(rows + b_rows) * double(cols) <= kHostReferenceLimit)
    extra += ByteCount::of(rows + b_rows, cols + static_cast<std::uint64_t>(p.words) * sizeof(Word));
  // The baseline: the unpacked matrix in float and its panel of C.
  if (c.baseline) {
    const auto panel = static_cast<std::uint64_t>(std::min(c.baseline_rows, p.rows));
    extra = max(extra, ByteCount::of(rows, cols * sizeof(float)) + ByteCount::of(panel, rows * sizeof(float)));
  }
  return bytes + extra;
}

// --- configuration ------------------------------------------------------------

namespace {

// Reads one input (gram.A or gram.B): a random matrix or a file. `size` gets
// where its rows come from, `cols_setting` where its column count does.
void read_source(const DeckNode& a, Source& src, std::string& size, std::string& cols_setting) {
  // No A at all: the default random matrix (every kernel is configured, run or not).
  const std::string kind = a.has("file") || a.has("random") ? a.one_of({"file", "random"}) : "random";
  if (kind == "random") {
    const DeckNode r = a.child("random");
    src.kind = Source::Kind::Random;
    src.rows = r.integer("rows", 1024, 1, kMaxDim);
    size = r.where("rows") + ": " + r.path() + ".rows";
    src.cols = r.integer("cols", 4096, 1, kMaxDim);
    cols_setting = r.where("cols") + ": " + r.path() + ".cols";
    src.density = r.real("density", 0.5, 0.0, 1.0);
    src.seed = static_cast<std::uint64_t>(r.integer("seed", 1, 0));
    return;
  }
  src.path = a.required_text("file");
  size = a.where("file") + ": " + a.path() + ".file";
  cols_setting = size;
  const bool packed = a.boolean("packed", false);
  if (packed) {
    src.cols = a.required_integer("cols", 1, kMaxDim);
    cols_setting = a.where("cols") + ": " + a.path() + ".cols";
  }
  try {  // problems with the file name the deck line and key that gave it
    const npy::Info info = npy::read_info(src.path);
    if (info.shape.size() != 2)
      throw UsageError(src.path + ": shape " + npy::shape_string(info.shape) + " (expected a 2-D matrix rows x cols)");
    src.rows = info.shape[0];
    src.data_offset = info.data_offset;
    if (packed) {
      src.kind = Source::Kind::Packed;
      npy::require_dtype(info, {npy::DType::U1});
      npy::require_shape(info, {src.rows, (src.cols + 7) / 8});
    } else {
      src.kind = Source::Kind::Unpacked;
      npy::require_dtype(info, {npy::DType::Bool, npy::DType::U1});
      src.bool_dtype = info.dtype == npy::DType::Bool;
      src.cols = info.shape[1];
    }
    if (src.rows < 1 || src.cols < 1 || src.rows > kMaxDim)
      throw UsageError(src.path + ": shape " + npy::shape_string(info.shape) + " (expected rows, cols >= 1)");
  } catch (const UsageError& e) {
    throw UsageError(a.located("file") + ": " + e.what());
  }
}

}  // namespace

void GramKernel::configure(const DeckNode& s, const Environment& env) {
  Config c;
  std::string a_cols, b_size, b_cols;
  read_source(s.child("A"), c.a, size_setting_, a_cols);
  // gram.B needs file or random; a B with neither but other keys is left to
  // the unknown-key check, which names them.
  const DeckNode b = s.child("B");
  if (s.has("B") && (b.has("file") || b.has("random") || b.empty())) {
    b.one_of({"file", "random"});
    read_source(b, c.b, b_size, b_cols);
    if (c.b.cols != c.a.cols)
      throw UsageError(b_cols + ": " + std::to_string(c.b.cols) + " columns in gram.B, expected the " +
                       std::to_string(c.a.cols) + " columns of gram.A (" + a_cols + ")");
  }
  if (!s.has("row_slice") || s.is_word("row_slice", "auto")) {
    s.text("row_slice", "auto");  // the chosen height is in the metrics (slice_rows)
    c.row_slice = 0;
  } else {
    c.row_slice = s.integer("row_slice", 0, 1);
  }
  if (!s.has("memory_budget") || s.is_word("memory_budget", "auto")) {
    s.text("memory_budget", "auto");
    // Half of what this rank may use of its device (collective, same on every rank).
    c.memory_budget = 0.5 * double(device_memory_per_rank(env.comm()).per_rank);
  } else {
    c.memory_budget = s.real("memory_budget", 0, 0, 1e18, true);
    c.budget_given = true;
  }
  budget_setting_ = s.where("memory_budget") + ": " + s.path() + ".memory_budget";
  const std::string sim = s.choice("similarity", "counts", {"counts", "jaccard", "dice", "cosine"});
  for (Similarity k : {Similarity::Counts, Similarity::Jaccard, Similarity::Dice, Similarity::Cosine})
    if (sim == similarity_name(k)) c.similarity = k;
  c.upper = s.choice("triangle", "full", {"full", "upper"}) == "upper";
  if (c.upper && c.two_inputs()) s.fail("triangle", "full with gram.B (A B^T has no symmetry)");
  const DeckNode w = s.child("write");
  c.write_c = w.text("C", "");
  c.write_summary = w.text("summary", "");
  if (w.has("pairs")) {
    const DeckNode p = w.child("pairs");
    c.write_pairs = p.required_text("path");
    c.pairs_min = p.required_real("min", 0, std::numeric_limits<double>::max());
  }
  if (w.has("top_k")) {
    const DeckNode t = w.child("top_k");
    c.write_top_k = t.required_text("path");
    // Every row has targets partners (targets - 1 without itself).
    c.top_k = t.required_integer("k", 1, std::max<std::int64_t>(1, c.targets() - (c.two_inputs() ? 0 : 1)));
    if (!c.two_inputs() && c.a.rows < 2) t.fail("k", "no k: a matrix of one row has no partners");
  }
  c.count_at_least = w.real_list("count_at_least", 0.0, kMaxThresholds);
  c.baseline = s.boolean("baseline", false);
  c.baseline_rows = s.integer("baseline_rows", 512, 1, kMaxDim);
  c.repeat = s.integer("repeat", 1, 1, 1000);
  config_ = c;
  outputs_.clear();
  add_output(w, "C", c.write_c);
  add_output(w, "summary", c.write_summary);
  if (!c.write_pairs.empty()) add_output(w.child("pairs"), "path", c.write_pairs);
  if (!c.write_top_k.empty()) add_output(w.child("top_k"), "path", c.write_top_k);
  if (c.row_slice > 0 && (c.a.rows + c.row_slice - 1) / c.row_slice > kMaxSlices) {
    // Too many slices; when A itself fits no device, that is the problem to name.
    const ByteCount packed = ByteCount::of(static_cast<std::uint64_t>(c.a.rows),
                                           static_cast<std::uint64_t>(words_allocated(c.a.cols)) * sizeof(Word));
    const std::string shortfall = memory_shortfall(packed, device_memory_per_rank(env.comm()));
    if (!shortfall.empty()) throw UsageError(size_setting_ + ": " + shortfall);
    s.fail("row_slice", "a slice height giving at most " + std::to_string(kMaxSlices) + " slices of the " +
                            std::to_string(c.a.rows) + " rows");
  }
  const Plan p = make_plan(config_, env.size());  // budget errors before anything runs
  if (c.row_slice > 0) size_setting_ = s.where("row_slice") + ": " + s.path() + ".row_slice";
  // An explicit slice height must respect an explicit budget too.
  if (c.row_slice > 0 && c.budget_given && p.packed_bytes + p.top_k_bytes + p.slice_bytes > c.memory_budget)
    s.fail("row_slice", "a slice height within gram.memory_budget (" + format_bytes(c.memory_budget) + "): packed A" +
                            (c.two_inputs() ? " and B " : " ") + format_bytes(p.packed_bytes) +
                            (p.top_k_bytes > 0 ? " + top-k lists " + format_bytes(p.top_k_bytes) : std::string()) +
                            " + " + std::to_string(p.height) + " rows of C " + format_bytes(p.slice_bytes));
}

std::vector<MemoryNeed> GramKernel::memory_needs(const Environment& env, bool verify) const {
  std::vector<MemoryNeed> needs;
  // An explicit budget must exist on the device (auto is half of it).
  if (config_.budget_given)
    needs.push_back({ByteCount(static_cast<std::uint64_t>(config_.memory_budget)), budget_setting_});
  const Plan p = make_plan(config_, env.size());
  needs.push_back({device_bytes(config_, p, verify, compat::device_is_host_accessible), size_setting_});
  return needs;
}

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
  const double pairs = c.two_inputs() ? double(p.rows) * double(p.targets) : double(p.rows) * double(p.rows - 1) / 2;
  os << "gram: A " << p.rows << " x " << p.cols << " (" << describe(c.a) << ")";
  if (c.two_inputs()) os << " x B " << c.b.rows << " x " << c.b.cols << " (" << describe(c.b) << "): C = A B^T";
  os << ", " << similarity_name(c.similarity) << ", "
     << (c.two_inputs() ? "all tiles" : c.upper ? "upper triangle" : "full triangle") << "\n"
     << "    packed " << (c.two_inputs() ? "A and B " : "A ") << gib(p.packed_bytes) << " per rank"
     << (p.top_k_bytes > 0 ? ", top-k lists " + gib(p.top_k_bytes) : std::string()) << "; " << p.slices.size()
     << " row slice(s) of " << p.height << " rows in " << p.rounds() << " round(s), " << gib(p.slice_bytes)
     << " each; device memory per rank " << gib(p.packed_bytes + p.top_k_bytes + p.slice_bytes) << " of budget "
     << gib(c.memory_budget) << "\n"
     << "    work: " << format_number(useful) << " useful bit-ops (rows x targets x cols), "
     << format_number(total * 64) << " executed (" << (c.two_inputs() ? "all" : "upper") << " tiles); busiest rank "
     << format_number(*std::max_element(per_rank.begin(), per_rank.end()) / total * 100) << "% of it\n";
  if (!c.write_c.empty())
    os << "    write.C " << c.write_c << ": "
       << gib((c.upper ? double(p.rows) * double(p.rows + 1) / 2 : double(p.rows) * double(p.targets)) * 4) << "\n";
  if (!c.write_top_k.empty())
    os << "    write.top_k " << c.write_top_k << ": " << p.rows << " x " << c.top_k << " partners, "
       << gib(double(p.rows) * double(c.top_k) * 12) << "\n";
  if (!c.write_pairs.empty())
    os << "    write.pairs " << c.write_pairs << ": pairs with value >= " << format_number(c.pairs_min) << ", at most "
       << format_number(pairs) << " (" << gib(pairs * 20) << "), streamed through a buffer of "
       << pair_buffer_records(p.height, p.targets) << " per slice\n";
  if (!c.count_at_least.empty())
    os << "    count_at_least: " << c.count_at_least.size() << " threshold(s) over " << format_number(pairs)
       << " pairs\n";
}

// --- input ----------------------------------------------------------------------

std::vector<std::uint8_t> host_rows(const Source& a, std::int64_t r0, std::int64_t n) {
  std::vector<std::uint8_t> out(static_cast<std::size_t>(n * a.cols));
  if (a.kind == Source::Kind::Random) {
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < a.cols; ++k)
        out[i * a.cols + k] = random_bit(a.seed, r0 + i, k, a.cols, a.density) ? 1 : 0;
  } else if (a.kind == Source::Kind::Unpacked) {
    npy::Info info = npy::read_info(a.path);
    npy::read_elements(info, std::uint64_t(r0 * a.cols), std::uint64_t(n * a.cols), out.data());
  } else {
    const std::int64_t nb = (a.cols + 7) / 8;
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n * nb));
    npy::Info info = npy::read_info(a.path);
    npy::read_elements(info, std::uint64_t(r0 * nb), std::uint64_t(n * nb), bytes.data());
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < a.cols; ++k) out[i * a.cols + k] = (bytes[i * nb + k / 8] >> (7 - k % 8)) & 1;
  }
  return out;
}

namespace {

using Packed = PackedView<MemSpace>;

// Reads rows [r0, r0 + n) of a file into host bytes, checking every value.
void check_file_block(const Source& a, const std::uint8_t* data, std::int64_t r0, std::int64_t n) {
  if (a.kind == Source::Kind::Unpacked) {
    for (std::int64_t e = 0; e < n * a.cols; ++e)
      if (data[e] > 1)
        throw UsageError(a.path + ": element (" + std::to_string(r0 + e / a.cols) + ", " + std::to_string(e % a.cols) +
                         ") is " + std::to_string(int(data[e])) + " (expected 0 or 1)");
  } else if (a.cols % 8 != 0) {
    const std::int64_t nb = (a.cols + 7) / 8;
    const std::uint8_t pad_mask = static_cast<std::uint8_t>((1u << (8 - a.cols % 8)) - 1);
    for (std::int64_t i = 0; i < n; ++i)
      if (data[i * nb + nb - 1] & pad_mask)
        throw UsageError(a.path + ": row " + std::to_string(r0 + i) + " has 1 bits past column " +
                         std::to_string(a.cols) + " (expected numpy packbits output with cols: " +
                         std::to_string(a.cols) + ")");
  }
}

Packed load_packed(const ExecSpace& exec, const Source& a, const char* label) {
  ScopedRegion region("kmini::gram::pack");
  Packed packed(std::string(label), a.rows, words_allocated(a.cols));
  if (a.kind == Source::Kind::Random) {
    pack_random(exec, packed, a.rows, a.cols, a.density, a.seed);
    return packed;
  }
  // Every rank reads the whole file, block by block, and packs on the device.
  const std::int64_t row_bytes = a.kind == Source::Kind::Packed ? (a.cols + 7) / 8 : a.cols;
  const std::int64_t block = std::max<std::int64_t>(1, std::min(a.rows, kReadBlockBytes / row_bytes));
  const npy::Info info = npy::read_info(a.path);
  Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, MemSpace> dev("kmini::gram::bytes", block, row_bytes);
  auto host = Kokkos::create_mirror_view(dev);
  for (std::int64_t r0 = 0; r0 < a.rows; r0 += block) {
    const std::int64_t n = std::min(block, a.rows - r0);
    exec.fence();  // the previous block's pack is done with `dev`
    npy::read_elements(info, std::uint64_t(r0 * row_bytes), std::uint64_t(n * row_bytes), host.data());
    check_file_block(a, host.data(), r0, n);
    auto dev_n = Kokkos::subview(dev, std::make_pair(std::int64_t(0), n), Kokkos::ALL());
    auto host_n = Kokkos::subview(host, std::make_pair(std::int64_t(0), n), Kokkos::ALL());
    Kokkos::deep_copy(exec, dev_n, host_n);
    if (a.kind == Source::Kind::Packed)
      pack_packed_bytes(exec, packed, dev_n, r0);
    else
      pack_unpacked_bytes(exec, packed, dev_n, r0);
  }
  exec.fence();
  return packed;
}

// Rows whose values every rank checks against the references: all of a small
// matrix, else each slice's first and last row and a few spread rows.
std::vector<std::int64_t> check_rows(const Plan& p) {
  std::vector<std::int64_t> rows;
  if (p.rows <= 256) {
    for (std::int64_t i = 0; i < p.rows; ++i) rows.push_back(i);
    return rows;
  }
  for (const auto& s : p.slices) {
    rows.push_back(s.r0);
    rows.push_back(s.r1 - 1);
  }
  for (std::int64_t t = 0; t < 16; ++t) rows.push_back(static_cast<std::int64_t>(random::hash(99, t) % p.rows));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (rows.size() > 64) rows.resize(64);
  return rows;
}

// The slice loop's device buffers.
struct SliceBuffers {
  Kokkos::View<std::int32_t*, MemSpace> ones, ones_b, counts;  // popcount per row of A, of B; C slice
  Kokkos::View<float*, MemSpace> sim;                          // similarity slice for write.C
  Kokkos::View<std::int64_t*, MemSpace> row_sums;
  Kokkos::View<std::uint64_t*, MemSpace> histogram;
};

struct Summary {
  std::vector<std::int64_t> row_sums;
  std::vector<std::uint64_t> histogram;
  std::uint64_t checksum = 0;
  std::int64_t trace = 0;
};

// Copies n values from a device view into `out` (raw bytes of T).
template <class T, class View>
void copy_to_host(const ExecSpace& exec, const View& v, std::int64_t n, void* out) {
  Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(static_cast<T*>(out), n);
  Kokkos::deep_copy(exec, hv, Kokkos::subview(v, std::make_pair(std::int64_t(0), n)));
  exec.fence();
}

}  // namespace

// --- run ---------------------------------------------------------------------------

KernelReport GramKernel::run(RunContext& ctx) {
  const Config& c = config_;
  const Environment& env = ctx.env;
  const Plan plan = make_plan(c, env.size());
  const std::int64_t rows = plan.rows, targets = plan.targets;
  const bool two = c.two_inputs();

  // Allocations (and the file reads of packing) are agreed by all ranks
  // before any collective: a rank that fails stops every rank.
  FencedTimer<ExecSpace> pack_timer(ctx.exec);
  const Packed packed = collectively(env.comm(), "gram", [&] { return load_packed(ctx.exec, c.a, "kmini::gram::A"); });
  // Unused buffers are allocated empty: default-constructed Views crashed on
  // destruction with the Kokkos 4.6.99 OpenMP build.
  const Packed packed_b = collectively(env.comm(), "gram", [&] {
    return two ? load_packed(ctx.exec, c.b, "kmini::gram::B") : Packed("kmini::gram::B", 0, 0);
  });
  const Packed& packed_t = two ? packed_b : packed;  // the rows of C's columns
  const double pack_seconds = allreduce_max(env.comm(), pack_timer.seconds());
  const bool want_summary = !c.write_summary.empty() || ctx.verify;
  const bool dense_float = c.float_values() && !c.write_c.empty();
  const SliceBuffers buffers = collectively(env.comm(), "gram", [&] {
    return SliceBuffers{Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::ones", rows),
                        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::ones_B", c.b.rows),
                        Kokkos::View<std::int32_t*, MemSpace>("kmini::gram::C_slice", plan.height * targets),
                        Kokkos::View<float*, MemSpace>("kmini::gram::S_slice", dense_float ? plan.height * targets : 0),
                        Kokkos::View<std::int64_t*, MemSpace>("kmini::gram::row_sums", want_summary ? rows : 0),
                        Kokkos::View<std::uint64_t*, MemSpace>("kmini::gram::histogram",
                                                                want_summary ? kHistogramBins : 0)};
  });
  const auto &ones = buffers.ones, &counts = buffers.counts;
  const auto& ones_t = two ? buffers.ones_b : buffers.ones;
  const auto& sim = buffers.sim;
  const auto& row_sums = buffers.row_sums;
  const auto& histogram = buffers.histogram;
  {
    ScopedRegion compute_region("kmini::gram::compute");
    row_ones(ctx.exec, packed, ones);
    if (two) row_ones(ctx.exec, packed_b, buffers.ones_b);
  }

  // One slice per rank and round (none for some ranks in the last round).
  const std::int64_t rounds = plan.rounds();
  std::vector<const Slice*> mine(static_cast<std::size_t>(rounds), nullptr);
  double executed_words = 0;
  for (const auto& s : plan.slices)
    if (s.rank == env.rank()) {
      mine[static_cast<std::size_t>(s.round)] = &s;
      executed_words += s.work;
    }

  // Timed repetitions: the slice loop alone (best of `repeat`).
  BestOverRepeats compute;
  for (std::int64_t rep = 0; rep + 1 < c.repeat; ++rep) {
    ScopedRegion compute_region("kmini::gram::compute");
    compute.add(env.comm(), time_together(env.comm(), ctx.exec, [&] {
      for (const Slice* s : mine)
        if (s) gram_slice(ctx.exec, packed, packed_t, plan.geometry(*s, two), counts);
    }));
  }

  // The final pass: compute, then summarise / check / write each slice.
  const auto checks = check_rows(plan);
  std::map<std::int64_t, std::vector<std::int32_t>> checked;  // row -> C(row, from ..)
  std::map<std::int64_t, std::int64_t> checked_from;            // the first column of the row's slice
  std::unique_ptr<npy::DistributedWriter> writer;
  if (!c.write_c.empty()) {
    const npy::Shape shape = c.upper ? npy::Shape{rows * (rows + 1) / 2} : npy::Shape{rows, targets};
    writer = std::make_unique<npy::DistributedWriter>(env.comm(), ctx.output_path(c.write_c),
                                                      dense_float ? npy::DType::F4 : npy::DType::I4, shape);
  }
  SparseOutputs sparse(ctx.exec, c, plan, env.comm(), ctx.output_path(c.write_pairs), ctx.output_path(c.write_top_k));
  double final_compute = 0, post_seconds = 0;
  std::uint64_t checksum = 0;
  MPI_Barrier(env.comm());
  for (std::int64_t round = 0; round < rounds; ++round) {
    const Slice* s = mine[static_cast<std::size_t>(round)];
    std::vector<char> host_block, host_lower;
    npy::DistributedWriter::Block upper_block, lower_block;
    bool has_lower = false;
    if (s) {
      const SliceGeometry g = plan.geometry(*s, two);
      FencedTimer<ExecSpace> t(ctx.exec);
      {
        ScopedRegion compute_region("kmini::gram::compute");
        gram_slice(ctx.exec, packed, packed_t, g, counts);
      }
      final_compute += t.seconds();
      FencedTimer<ExecSpace> post(ctx.exec);
      if (want_summary) {
        ScopedRegion summary_region("kmini::gram::summary");
        checksum += summarise_slice(ctx.exec, counts, g, c.a.cols, row_sums, histogram);
      }
      if (dense_float) {
        ScopedRegion similarity_region("kmini::gram::similarity");
        similarity_slice(ctx.exec, c.similarity, counts, ones, ones_t, g, sim);
      }
      const std::int64_t h = g.height(), w = g.width();
      const bool checks_here = ctx.verify && std::any_of(checks.begin(), checks.end(), [&](std::int64_t i) {
                                 return i >= s->r0 && i < s->r1;
                               });
      if (checks_here) {
        // Checked rows: their counts (similarities are checked through them).
        std::vector<std::int32_t> values(static_cast<std::size_t>(h * w));
        copy_to_host<std::int32_t>(ctx.exec, counts, h * w, values.data());
        for (std::int64_t i : checks)
          if (i >= s->r0 && i < s->r1) {
            checked[i].assign(values.begin() + (i - s->r0) * w, values.begin() + (i - s->r0 + 1) * w);
            checked_from[i] = g.col0();
          }
      }
      if (writer) {
        // The slice values as written: counts (int32) or similarity (float32), 4 bytes each.
        host_block.resize(static_cast<std::size_t>(h * w) * 4);
        if (dense_float)
          copy_to_host<float>(ctx.exec, sim, h * w, host_block.data());
        else
          copy_to_host<std::int32_t>(ctx.exec, counts, h * w, host_block.data());
      }
      if (writer && c.upper) {
        // Rows r0..r1 of the packed upper triangle are one contiguous run.
        std::vector<char> packed_rows;
        packed_rows.reserve(static_cast<std::size_t>(h * w) * 4);
        for (std::int64_t i = 0; i < h; ++i)
          packed_rows.insert(packed_rows.end(), host_block.begin() + (i * w + i) * 4, host_block.begin() + (i + 1) * w * 4);
        host_block.swap(packed_rows);
        const std::int64_t first = s->r0 * rows - s->r0 * (s->r0 - 1) / 2;
        upper_block = {0, first, 1, static_cast<std::int64_t>(host_block.size() / 4), host_block.data()};
      } else if (writer) {
        upper_block = {s->r0, g.col0(), h, w, host_block.data()};
        // The mirror: C(r1.., r0..r1) = C(r0..r1, r1..)^T.
        if (!two && s->r1 < rows) {
          const std::int64_t below = rows - s->r1;
          host_lower.resize(static_cast<std::size_t>(below * h) * 4);
          for (std::int64_t j = 0; j < below; ++j)
            for (std::int64_t i = 0; i < h; ++i)
              std::copy_n(host_block.begin() + (i * w + h + j) * 4, 4, host_lower.begin() + (j * h + i) * 4);
          lower_block = {s->r1, s->r0, below, h, host_lower.data()};
          has_lower = true;
        }
      }
      post_seconds += post.seconds();
    }
    if (writer) {
      ScopedRegion write_region("kmini::gram::write");
      writer->write_round(s ? &upper_block : nullptr);
      if (!c.upper && !two) writer->write_round(has_lower ? &lower_block : nullptr);
    }
    sparse.add_round(s, counts, ones, ones_t);
  }
  if (writer) {
    ScopedRegion write_region("kmini::gram::write");
    writer->commit();
  }
  compute.add(env.comm(), final_compute);
  const double compute_seconds = compute.slowest();

  KernelReport report;
  Json& m = report.metrics;
  Json sparse_summary = Json::object();
  sparse.finish(m, &sparse_summary);

  // Summary over all ranks.
  std::optional<ScopedRegion> summary_region(std::in_place, "kmini::gram::summary");
  Summary summary;
  std::vector<std::int32_t> host_ones(static_cast<std::size_t>(rows));
  copy_to_host<std::int32_t>(ctx.exec, ones, rows, host_ones.data());
  for (auto v : host_ones) summary.trace += v;
  if (want_summary) {
    summary.row_sums.resize(static_cast<std::size_t>(rows));
    summary.histogram.resize(kHistogramBins);
    copy_to_host<std::int64_t>(ctx.exec, row_sums, rows, summary.row_sums.data());
    copy_to_host<std::uint64_t>(ctx.exec, histogram, kHistogramBins, summary.histogram.data());
    MPI_Allreduce(MPI_IN_PLACE, summary.row_sums.data(), static_cast<int>(rows), MPI_INT64_T, MPI_SUM, env.comm());
    MPI_Allreduce(MPI_IN_PLACE, summary.histogram.data(), kHistogramBins, MPI_UINT64_T, MPI_SUM, env.comm());
    MPI_Allreduce(&checksum, &summary.checksum, 1, MPI_UINT64_T, MPI_SUM, env.comm());
  }

  summary_region.reset();

  // Verification.
  if (ctx.verify) {
    ScopedRegion verify_region("kmini::gram::verify");
    FencedTimer<ExecSpace> vt(ctx.exec);
    bool ok = true;
    std::int64_t compared = 0, mismatches = 0;
    Json& v = m["verification"];
    const Source& t_src = two ? c.b : c.a;
    // The host reference on small matrices, else single elements from the source rows.
    const bool small = double(rows + c.b.rows) * double(c.a.cols) <= kHostReferenceLimit;
    reference::HostPacked ref, ref_b;
    if (small) ref = reference::pack(host_rows(c.a, 0, rows), rows, c.a.cols);
    if (small && two) ref_b = reference::pack(host_rows(c.b, 0, c.b.rows), c.b.rows, c.b.cols);
    const reference::HostPacked& ref_t = two ? ref_b : ref;
    for (const auto& [i, values] : checked) {
      const std::int64_t from = checked_from[i];
      if (small) {
        for (std::int64_t j = from; j < targets; ++j) {
          ++compared;
          if (values[static_cast<std::size_t>(j - from)] != reference::count(ref, i, ref_t, j)) ++mismatches;
        }
      } else {
        // Too large for the host reference: C(i, i) against the source row
        // (two inputs: C(i, i mod targets) from both source rows).
        const std::int64_t j = two ? i % targets : i;
        const auto row_i = host_rows(c.a, i, 1), row_j = host_rows(t_src, j, 1);
        std::int64_t both = 0;
        for (std::int64_t k = 0; k < c.a.cols; ++k) both += row_i[k] & row_j[k];
        ++compared;
        if (values[static_cast<std::size_t>(j - from)] != both) ++mismatches;
      }
    }
    v["host_reference"] = small ? "all columns of the checked rows' slices"
                                : two ? "one element per checked row (matrices above the host reference limit)"
                                      : "diagonal only (matrix above the host reference limit)";
    // Row sums: sum_j C(i, j) = sum_k A(i, k) * colcount(k) (of B with two inputs), for the checked rows.
    std::int64_t row_sum_mismatches = 0;
    if (small) {
      std::vector<std::int64_t> colcount(static_cast<std::size_t>(c.a.cols), 0);
      for (std::int64_t i = 0; i < targets; ++i)
        for (std::int64_t k = 0; k < c.a.cols; ++k)
          colcount[static_cast<std::size_t>(k)] += (ref_t.bits[i * ref_t.words + k / 64] >> (k % 64)) & 1;
      for (std::int64_t i : checks) {
        std::int64_t expect = 0;
        for (std::int64_t k = 0; k < c.a.cols; ++k)
          if ((ref.bits[i * ref.words + k / 64] >> (k % 64)) & 1) expect += colcount[static_cast<std::size_t>(k)];
        if (summary.row_sums[static_cast<std::size_t>(i)] != expect) ++row_sum_mismatches;
      }
    }
    // Independent check with KokkosBlas::gemm (double) on the unpacked matrices.
    std::int64_t gemm_compared = 0, gemm_mismatches = 0;
    if (double(targets) * double(c.a.cols) <= kGemmCheckLimit) {
      std::vector<std::int64_t> mine_checked;
      for (const auto& kv : checked) mine_checked.push_back(kv.first);
      if (!mine_checked.empty()) {
        std::vector<double> g;
        gemm_panel_double(c.a, t_src, mine_checked, g);
        for (std::size_t t = 0; t < mine_checked.size(); ++t) {
          const std::int64_t i = mine_checked[t], from = checked_from[i];
          const auto& values = checked[i];
          for (std::int64_t j = from; j < targets; ++j) {
            ++gemm_compared;
            if (double(values[static_cast<std::size_t>(j - from)]) != g[t * targets + j]) ++gemm_mismatches;
          }
        }
      }
      v["gemm_check"] = two ? "KokkosBlas::gemm (double) of the checked rows against B^T"
                            : "KokkosBlas::gemm (double) of the checked rows against A^T";
    } else {
      v["gemm_check"] = "skipped (matrix above the gemm check limit)";
    }
    ok = mismatches == 0 && row_sum_mismatches == 0 && gemm_mismatches == 0;
    v["checked_rows"] = Json(static_cast<long long>(checks.size()));
    v["elements_compared"] = allreduce_sum(env.comm(), double(compared));
    v["mismatches"] = allreduce_sum(env.comm(), double(mismatches));
    v["row_sum_mismatches"] = allreduce_sum(env.comm(), double(row_sum_mismatches));
    v["gemm_elements_compared"] = allreduce_sum(env.comm(), double(gemm_compared));
    v["gemm_mismatches"] = allreduce_sum(env.comm(), double(gemm_mismatches));
    report.verified = all_ranks_ok(env.comm(), ok);
    v["seconds"] = allreduce_max(env.comm(), vt.seconds());
  }

  // Throughputs.
  const double useful = double(rows) * double(targets) * double(c.a.cols);
  const double executed = allreduce_sum(env.comm(), executed_words) * 64;
  m["rows"] = Json(static_cast<long long>(rows));
  m["cols"] = Json(static_cast<long long>(c.a.cols));
  if (two) m["b_rows"] = Json(static_cast<long long>(c.b.rows));
  m["similarity"] = similarity_name(c.similarity);
  m["slices"] = Json(static_cast<long long>(plan.slices.size()));
  m["slice_rows"] = Json(static_cast<long long>(plan.height));
  m["memory_budget_bytes"] = c.memory_budget;  // the value chosen for `auto`
  m["tile"] = TileParams::tile;
  m["chunk_words"] = TileParams::chunk;
  m["micro_tile"] = std::to_string(TileParams::mr) + "x" + std::to_string(TileParams::nr);
  m["team_size"] = TileParams::team_size;
  m["pack_seconds"] = pack_seconds;
  m["compute_seconds"] = compute_seconds;
  m["postprocess_seconds"] = allreduce_max(env.comm(), post_seconds);
  m["useful_bit_ops"] = useful;
  m["executed_bit_ops"] = executed;
  m["useful_bit_ops_per_s"] = useful / compute_seconds;
  m["executed_bit_ops_per_s"] = executed / compute_seconds;
  // Peak: the AND+popcount probe, one worker per thread of this rank.
  std::optional<ScopedRegion> probe_region(std::in_place, "kmini::gram::probe");
  // One worker per thread the device keeps resident (an H100: 132 SMs x 2048),
  // each looping long enough to hide the launch.
  const double peak = probe_and_popcount_peak(ctx.exec, ctx.exec.concurrency(), kProbeIterations);
  probe_region.reset();
  const double peak_all = allreduce_sum(env.comm(), peak);
  m["probe_and_popcount_peak_bit_ops_per_s"] = peak_all;
  m["fraction_of_peak"] = executed / compute_seconds / peak_all;
  if (!two) m["trace"] = Json(static_cast<long long>(summary.trace));
  if (want_summary) {
    std::ostringstream hex;
    hex << std::hex << summary.checksum;
    m["checksum"] = hex.str();
  }

  SummaryRow row = rate_row(std::string("gram.") + similarity_name(c.similarity),
                            std::to_string(rows) + "x" + std::to_string(c.a.cols) +
                                (two ? "xB" + std::to_string(c.b.rows) : ""),
                            compute_seconds, compute.mine(), useful, env.size(), "bitop/s");
  row.roof_fraction = executed / compute_seconds / peak_all;
  row.roof = kRoofPopcount;
  if (report.verified) row.verified = *report.verified;
  report.rows.push_back(row);

  if (c.baseline) {
    const std::int64_t panel = std::min(c.baseline_rows, rows);
    const double my_seconds = gemm_panel_float(c.a, panel, nullptr);
    const double seconds = allreduce_max(env.comm(), my_seconds);
    const double macs = double(panel) * double(rows) * double(c.a.cols);
    Json& b = m["baseline"];
    b["what"] = "KokkosBlas::gemm float, A[0:panel] * A^T on the unpacked matrix (one rank's device)";
    b["panel_rows"] = Json(static_cast<long long>(panel));
    b["seconds"] = seconds;
    b["useful_ops_per_s"] = macs / seconds;
    b["gram_speedup"] = (useful / compute_seconds / env.size()) / (macs / seconds);
    SummaryRow br;
    br.label = "gram.baseline_sgemm";
    br.size = std::to_string(panel) + "x" + std::to_string(rows) + "x" + std::to_string(c.a.cols);
    br.seconds = seconds;
    br.rank_seconds = my_seconds;
    br.throughput = macs / seconds;  // every rank runs the same panel: no aggregate
    br.unit = "op/s";
    report.rows.push_back(br);
  }

  if (!c.write_summary.empty()) on_root_collectively(env.comm(), [&] {
    ScopedRegion write_region("kmini::gram::write");
    Json s = Json::object();
    s["rows"] = Json(static_cast<long long>(rows));
    s["cols"] = Json(static_cast<long long>(c.a.cols));
    if (two) s["b_rows"] = Json(static_cast<long long>(c.b.rows));
    if (!two) s["trace"] = Json(static_cast<long long>(summary.trace));
    std::ostringstream hex;
    hex << std::hex << summary.checksum;
    s["checksum"] = hex.str();
    s["checksum_definition"] = two ? "sum over all i, j of C(i,j) * splitmix64(0x6772616d + i, j) mod 2^64"
                                   : "sum over i <= j of C(i,j) * splitmix64(0x6772616d + i, j) mod 2^64";
    s["histogram_bin_width"] = double(c.a.cols + 1) / kHistogramBins;
    s["histogram"] = Json::array_of(summary.histogram);
    s["row_sums"] = Json::array_of(summary.row_sums);
    if (const Json* counts_at = sparse_summary.find("count_at_least")) s["count_at_least"] = *counts_at;
    write_text_file_atomically(ctx.output_path(c.write_summary), s.dump() + "\n");
  });
  return report;
}

}  // namespace kmini::gram
