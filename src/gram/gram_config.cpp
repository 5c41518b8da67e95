// The gram deck section: inputs A and B, slices, outputs; all validated (and
// the plan made) before anything is allocated.
#include "core/device_memory.hpp"
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_outputs.hpp"
#include "gram/impl/gram_wgmma.hpp"
#include "io/fps.hpp"
#include "io/npy.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kmini::gram {

using detail::kMaxDim;
using detail::kMaxSlices;

namespace {

// An FPS fingerprint file: its index (every record's form, IDs unique) is
// read here, so that a malformed file is exit 2 before anything runs.
void read_fps_source(const DeckNode& a, Source& src) {
  try {
    auto index = std::make_shared<fps::Index>(fps::read_index(src.path));
    src.kind = Source::Kind::Fps;
    src.rows = index->rows();
    src.cols = index->num_bits;
    if (src.rows > kMaxDim || src.cols > kMaxDim)
      throw UsageError(src.path + ": " + std::to_string(src.rows) + " records of " + std::to_string(src.cols) +
                       " bits (expected at most " + std::to_string(kMaxDim) + " of each)");
    src.fps = std::move(index);
  } catch (const UsageError& e) {
    throw UsageError(a.located("file") + ": " + e.what());
  }
}

// Reads one input (gram.A or gram.B): a random matrix or a file. `size` gets
// where its rows come from, `cols_setting` where its column count does.
void read_source(const DeckNode& a, const std::string& m, Source& src, std::string& size, std::string& cols_setting) {
  const KernelDeclaration& d = declaration();
  // No A at all: the default random matrix (every kernel is configured, run or not).
  const std::string kind = a.has("file") || a.has("random") ? a.one_of({"file", "random"}) : "random";
  if (kind == "random") {
    const DeckNode r = a.child(d.key(m + ".random"));
    src.kind = Source::Kind::Random;
    src.rows = r.integer(d.key(m + ".random.rows"));
    size = r.located("rows");
    src.cols = r.integer(d.key(m + ".random.cols"));
    cols_setting = r.located("cols");
    src.density = r.real(d.key(m + ".random.density"));
    src.seed = static_cast<std::uint64_t>(r.integer(d.key(m + ".random.seed")));
    return;
  }
  src.path = a.text(d.key(m + ".file"));  // present: one_of found it
  size = a.located("file");
  cols_setting = size;
  const bool packed = a.boolean(d.key(m + ".packed"));
  if (fps::is_fps(src.path)) {
    if (packed) a.fail("packed", "false with an FPS file (its header or its records give the width)");
    read_fps_source(a, src);
    return;
  }
  if (packed) {
    src.cols = a.integer(d.key(m + ".cols"));
    cols_setting = a.located("cols");
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

std::string unreachable_threshold(Similarity similarity, double threshold) {
  if (similarity == Similarity::Counts || threshold <= 1.0) return "";
  return std::string("a value in [0, 1] (") + similarity_name(similarity) + " values lie in [0, 1])";
}

std::string tversky_problem(Similarity similarity, const SimilarityParams& p, bool two_inputs) {
  if (similarity != Similarity::Tversky) return "";
  if (!(p.alpha + p.beta > 0)) return "weights alpha + beta > 0 (with both 0 every score is 0)";
  if (asymmetric(similarity, p) && !two_inputs)
    return "alpha == beta with one input (with alpha != beta the score of (i, j) is not that of (j, i), and A A^T "
           "computes each pair once): give the targets as B, or A again as B for all pairs";
  return "";
}

PruneRefusal prune_refusal(bool two_inputs, bool all_of_c, const std::vector<double>& minimums, bool ring) {
  if (!two_inputs) return PruneRefusal::OneInput;
  if (all_of_c) return PruneRefusal::AllOfC;
  if (minimums.empty()) return PruneRefusal::NoOutput;
  if (*std::min_element(minimums.begin(), minimums.end()) <= 0) return PruneRefusal::NoMinimum;
  return ring ? PruneRefusal::Ring : PruneRefusal::None;
}

namespace {

// The minimums of a deck's sparse outputs (prune_refusal).
std::vector<double> output_minimums(const Config& c) {
  std::vector<double> m = c.count_at_least;
  if (!c.write_pairs.empty()) m.push_back(c.pairs_min);
  if (!c.write_top_k.empty()) m.push_back(c.top_k_min);
  return m;
}

}  // namespace

double prune_minimum(const Config& c) {
  if (!c.prune) return 0;
  const std::vector<double> m = output_minimums(c);
  if (prune_refusal(c.two_inputs(), !c.write_c.empty() || !c.write_summary.empty(), m, false) != PruneRefusal::None)
    return 0;
  return *std::min_element(m.begin(), m.end());
}

double prune_minimum(const Config& c, const Plan& plan) { return plan.ring() ? 0.0 : prune_minimum(c); }

std::vector<std::int64_t> self_columns(const std::vector<std::string>& query_ids,
                                       const std::vector<std::string>& target_ids) {
  std::unordered_map<std::string_view, std::int64_t> target_of;
  target_of.reserve(target_ids.size());
  for (std::size_t j = 0; j < target_ids.size(); ++j) target_of.emplace(target_ids[j], static_cast<std::int64_t>(j));
  std::vector<std::int64_t> self(query_ids.size(), -1);
  for (std::size_t i = 0; i < query_ids.size(); ++i)
    if (const auto it = target_of.find(query_ids[i]); it != target_of.end()) self[i] = it->second;
  return self;
}

namespace {

// gram.A and gram.B; `size_setting` names where A's size comes from.
void read_inputs(const DeckNode& s, const KernelDeclaration& d, Config& c, std::string& size_setting) {
  std::string a_cols, b_size, b_cols;
  read_source(s.child(d.key("A")), "A", c.a, size_setting, a_cols);
  // gram.B needs file or random; a B with neither but other keys is left to
  // the unknown-key check, which names them.
  const DeckNode b = s.child(d.key("B"));
  if (s.has("B") && (b.has("file") || b.has("random") || b.empty())) {
    b.one_of({"file", "random"});
    read_source(b, "B", c.b, b_size, b_cols);
    if (c.b.cols != c.a.cols)
      throw UsageError(b_cols + ": " + std::to_string(c.b.cols) + " columns in gram.B, expected the " +
                       std::to_string(c.a.cols) + " columns of gram.A (" + a_cols + ")");
  }
}

// gram.tversky: with similarity tversky, and only then.
void read_tversky(const DeckNode& s, const KernelDeclaration& d, Config& c) {
  const bool tversky = c.similarity == Similarity::Tversky;
  if (!s.has("tversky")) {
    if (tversky) s.fail("tversky", "{alpha: ..., beta: ...}, the weights of similarity tversky");
    return;
  }
  if (!tversky)
    s.fail("tversky",
           "no gram.tversky with similarity " + s.choice(d.key("similarity")) + " (its weights are tversky's)");
  const DeckNode t = s.child(d.key("tversky"));
  c.tversky_alpha = t.real(d.key("tversky.alpha"));
  c.tversky_beta = t.real(d.key("tversky.beta"));
  // A gram.B the deck gave but could not read is the unknown-key check's to name.
  const std::string expected = tversky_problem(c.similarity, c.similarity_params(), c.two_inputs() || s.has("B"));
  if (!expected.empty()) t.fail(c.tversky_alpha + c.tversky_beta > 0 ? "beta" : "alpha", expected);
}

// gram.exclude_self: with FPS files as A and B, whose IDs it matches.
void read_exclude_self(const DeckNode& s, const KernelDeclaration& d, Config& c) {
  if (!s.boolean(d.key("exclude_self"))) return;
  if (!c.two_inputs() && s.has("B")) return;  // a gram.B not read: the unknown-key check names it
  if (!c.two_inputs()) s.fail("exclude_self", "false without gram.B (with one input no row is its own partner)");
  if (!c.a.fps || !c.b.fps) s.fail("exclude_self", "false, or FPS files as gram.A and gram.B (it matches their IDs)");
  if (c.write_pairs.empty() && c.write_top_k.empty() && c.count_at_least.empty())
    s.fail("exclude_self", "false without write.pairs, write.top_k or write.count_at_least (what it leaves out of)");
  c.self_cols = self_columns(c.a.fps->ids, c.b.fps->ids);
}

// gram.similarity, gram.triangle and gram.write.
void read_outputs(const DeckNode& s, const KernelDeclaration& d, Config& c) {
  similarity_from_name(s.choice(d.key("similarity")), c.similarity);  // a declared name: one of them
  c.empty_similarity = s.real(d.key("empty_similarity"));
  read_tversky(s, d, c);
  c.upper = s.choice(d.key("triangle")) == "upper";
  if (c.upper && c.two_inputs()) s.fail("triangle", "full with gram.B (A B^T has no symmetry)");
  const DeckNode w = s.child(d.key("write"));
  c.write_c = w.output_path(d.key("write.C"));
  c.write_summary = w.output_path(d.key("write.summary"));
  if (w.has("pairs")) {
    const DeckNode p = w.child(d.key("write.pairs"));
    c.write_pairs = p.output_path(d.key("write.pairs.path"));
    c.pairs_min = p.real(d.key("write.pairs.min"));
    c.write_pairs_text = p.output_path(d.key("write.pairs.text"));
    const std::string expected = unreachable_threshold(c.similarity, c.pairs_min);
    if (!expected.empty()) p.fail("min", expected);
  }
  if (w.has("top_k")) {
    const DeckNode t = w.child(d.key("write.top_k"));
    c.write_top_k = t.output_path(d.key("write.top_k.path"));
    c.write_top_k_text = t.output_path(d.key("write.top_k.text"));
    c.write_top_k_simsearch = t.output_path(d.key("write.top_k.simsearch"));
    if (!c.write_top_k_simsearch.empty() && c.similarity == Similarity::Counts)
      t.fail("simsearch", "no simsearch file with similarity counts (its scores are similarities)");
    c.top_k_min = t.real(d.key("write.top_k.min"));
    const std::string expected = unreachable_threshold(c.similarity, c.top_k_min);
    if (!expected.empty()) t.fail("min", expected);
    // Every row has targets partners (targets - 1 without itself).
    c.top_k =
        t.required_integer(d.key("write.top_k.k"), std::max<std::int64_t>(1, c.targets() - (c.two_inputs() ? 0 : 1)));
    if (!c.two_inputs() && c.a.rows < 2) t.fail("k", "no k: a matrix of one row has no partners");
  }
  c.count_at_least = w.real_list(d.key("write.count_at_least"));
  for (double t : c.count_at_least) {
    const std::string expected = unreachable_threshold(c.similarity, t);
    if (!expected.empty()) w.fail("count_at_least", "values each " + expected);
  }
  read_exclude_self(s, d, c);
}

// gram.engine, gram.tensor_core_tile and gram.micro_kernel.
void read_engine(const DeckNode& s, const KernelDeclaration& d, Config& c) {
  // auto: the tensor-core engine where the build has it (bit-exact against
  // popcount and about 3x its rate, docs/performance.md), else popcount
  // (HIP included: the engine is CUDA's 1-bit mma, AMD GPUs have no such instruction).
  const std::string engine = s.choice(d.key("engine"));
  if (engine == "tensor_core" && !tensor_core::kAvailable)
    s.fail("engine", "popcount or auto: this build (Kokkos " + compat::execution_space_name() +
                         ") has no tensor-core engine (it needs Kokkos with CUDA for compute capability 8.0 or newer)");
  c.engine = engine == "tensor_core" ? Engine::TensorCore : engine == "auto" ? kAutoEngine : Engine::Popcount;
  const std::string tile = s.choice(d.key("tensor_core_tile"));
  for (TensorCoreTile t : kTensorCoreTiles)
    if (tile == tensor_core_tile_name(t)) c.tensor_core_tile = t;
  if (c.engine == Engine::TensorCore && c.tensor_core_tile == TensorCoreTile::Warpgroup64x128) {
    const std::string why = wgmma::unavailable();
    if (!why.empty()) s.fail("tensor_core_tile", "another kernel than warpgroup64x128: " + why);
  }
  // auto: the one the target's instruction set selects (kAutoMicroKernel);
  // the others only where this build contains them (KMINI_ARCH / KMINI_NATIVE).
  const std::string mk = s.choice(d.key("micro_kernel"));
  if (mk == "auto") return;
  std::string compiled;
  for (MicroKernel k : kMicroKernels) {
    if (!micro_kernel_compiled(k)) continue;
    if (mk == micro_kernel_name(k)) c.micro_kernel = k;
    compiled += std::string(compiled.empty() ? "" : ", ") + micro_kernel_name(k);
  }
  if (mk != micro_kernel_name(c.micro_kernel))
    s.fail("micro_kernel", "auto or one this build contains (" + compiled + "): " + mk +
                               " needs a host build for a CPU with its instructions (KMINI_ARCH or KMINI_NATIVE)");
}

// gram.distribution and gram.ring_schedule.
void read_distribution(const DeckNode& s, const KernelDeclaration& d, Config& c) {
  // replicated: every rank holds packed A (and B); ring: a 1/P share, the
  // rest travelling around the ranks; auto: replicated while it fits the budget.
  const std::string distribution = s.choice(d.key("distribution"));
  for (Distribution x : {Distribution::Replicated, Distribution::Ring, Distribution::Auto})
    if (distribution == distribution_name(x)) c.distribution = x;
  // ring: the circulant block pairs for top-k, count_at_least and the summary,
  // the slices with write.C or write.pairs (auto); either one asked for.
  const std::string schedule = s.choice(d.key("ring_schedule"));
  for (RingSchedule r : {RingSchedule::Auto, RingSchedule::Slices, RingSchedule::Circulant})
    if (schedule == ring_schedule_name(r)) c.ring_schedule = r;
  if (c.ring_schedule == RingSchedule::Circulant && !c.circulant_possible())
    s.fail("ring_schedule",
           "slices or auto with write.C or write.pairs (the circulant computes top-k, "
           "count_at_least and the summary only)");
}

// gram.prune: queries against targets whose every output has a minimum above 0.
void check_prune(const DeckNode& s, const Config& c) {
  const char* expected = nullptr;
  switch (prune_refusal(c.two_inputs() || s.has("B"), !c.write_c.empty() || !c.write_summary.empty(),
                        output_minimums(c), c.distribution == Distribution::Ring)) {
    case PruneRefusal::OneInput: expected = "false without gram.B (it prunes queries against targets)"; break;
    case PruneRefusal::AllOfC: expected = "false with write.C or write.summary (they need every value of C)"; break;
    case PruneRefusal::NoOutput:
      expected = "false without write.pairs, write.top_k or write.count_at_least (it skips what none keeps)";
      break;
    case PruneRefusal::NoMinimum:
      expected =
          "false unless write.pairs.min, write.top_k.min and each write.count_at_least value are above 0 "
          "(it skips the tiles below the smallest)";
      break;
    case PruneRefusal::Ring: expected = "false with distribution ring (it runs replicated)"; break;
    case PruneRefusal::None: return;
  }
  s.fail("prune", expected);
}

}  // namespace

void GramKernel::configure(const DeckNode& s, const Environment& env) {
  Config c;
  const KernelDeclaration& d = declaration();
  read_inputs(s, d, c, size_setting_);
  // auto: the chosen height is in the metrics (slice_rows)
  c.row_slice = s.is_auto(d.key("row_slice")) ? 0 : s.integer(d.key("row_slice"), 0);
  if (s.is_auto(d.key("memory_budget"))) {
    // Half of what this rank may use of its device (collective, same on every rank).
    c.memory_budget = 0.5 * double(device_memory_per_rank(env.comm()).per_rank);
  } else {
    c.memory_budget = s.byte_size(d.key("memory_budget"));
    c.budget_given = true;
  }
  budget_setting_ = s.located("memory_budget");
  read_outputs(s, d, c);
  c.baseline = s.boolean(d.key("baseline"));
  c.probe = s.boolean(d.key("probe"));
  c.prune = s.boolean(d.key("prune"));
  read_distribution(s, d, c);
  if (c.prune) check_prune(s, c);
  c.baseline_rows = s.integer(d.key("baseline_rows"));
  c.repeat = s.integer(d.key("repeat"));
  read_engine(s, d, c);
  config_ = c;
  const DeckNode w = s.child(d.key("write"));
  outputs_.clear();
  add_output(w, "C", c.write_c);
  add_output(w, "summary", c.write_summary);
  if (!c.write_pairs.empty()) add_output(w.child("pairs"), "path", c.write_pairs);
  if (!c.write_pairs_text.empty()) add_output(w.child("pairs"), "text", c.write_pairs_text);
  if (!c.write_top_k.empty()) add_output(w.child("top_k"), "path", c.write_top_k);
  if (!c.write_top_k_text.empty()) add_output(w.child("top_k"), "text", c.write_top_k_text);
  if (!c.write_top_k_simsearch.empty()) add_output(w.child("top_k"), "simsearch", c.write_top_k_simsearch);
  check_slices(s, env);
}

// Slice heights the deck sets: not too many slices, within an explicit budget.
void GramKernel::check_slices(const DeckNode& s, const Environment& env) {
  const Config& c = config_;
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
  if (c.row_slice > 0) size_setting_ = s.located("row_slice");
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

}  // namespace kmini::gram
