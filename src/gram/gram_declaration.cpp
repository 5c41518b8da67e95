// The gram kernel, declared once: its deck keys, figure of merit, decks and run settings.
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_outputs.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace kmini::gram {

namespace {

// gram.similarity's choices: the similarities' names, then their aliases.
std::vector<std::string> similarity_names() {
  std::vector<std::string> names;
  for (Similarity k : kSimilarities) names.emplace_back(similarity_name(k));
  for (const SimilarityAlias& a : kSimilarityAliases) names.emplace_back(a.name);
  return names;
}

// gram.tensor_core_tile's choices: auto, then every kernel's name.
std::vector<std::string> tensor_core_tile_options() {
  std::vector<std::string> names{tensor_core_tile_name(TensorCoreTile::Auto)};
  for (TensorCoreTile t : kTensorCoreTiles) names.emplace_back(tensor_core_tile_name(t));
  return names;
}

// gram.A and gram.B take the same forms.
void add_input(std::vector<DeckKey>& keys, const std::string& m, const std::string& what) {
  const double max_dim = static_cast<double>(detail::kMaxDim);
  keys.push_back(DeckKey::section(m, what + ": random or file"));
  keys.push_back(DeckKey::section(m + ".random", what + " with random 0/1 entries"));
  keys.push_back(DeckKey::integer(m + ".random.rows", 1024, 1, max_dim).with("rows", "Rows of " + m));
  keys.push_back(DeckKey::integer(m + ".random.cols", 4096, 1, max_dim).with("columns", "Columns of " + m));
  keys.push_back(DeckKey::real(m + ".random.density", 0.5, 0.0, 1.0).with("", "Probability of a 1"));
  keys.push_back(DeckKey::integer(m + ".random.seed", 1, 0).with("", "Seed of the random entries"));
  keys.push_back(DeckKey::text(m + ".file")
                     .with("", m + " from a 2-D .npy file (bool or uint8 0/1, or packed bits) or a chemfp FPS "
                                   "fingerprint file (.fps or a #FPS1 header: one row per record, IDs kept)"));
  keys.push_back(DeckKey::boolean(m + ".packed", false)
                     .with("", "The file holds np.packbits rows (uint8, rows x ceil(cols/8), big bit order)"));
  keys.push_back(DeckKey::integer(m + ".cols", Json(), 1, max_dim).must().with("columns", "Columns of a packed file"));
}

// gram.write.pairs' and gram.write.top_k's keys (the records and their text
// with IDs), after those two sections.
void add_sparse_outputs(std::vector<DeckKey>& keys) {
  const double max_dim = static_cast<double>(detail::kMaxDim);
  const std::vector<DeckKey> outputs = {
      DeckKey::output_path("write.pairs.path", {".npy"}).must().with("", "The pairs as a .npy file of records"),
      DeckKey::real("write.pairs.min", Json(), 0, std::numeric_limits<double>::max())
          .must()
          .with("", "The least value of a pair written"),
      DeckKey::output_path("write.pairs.text", {".tsv", ".txt"})
          .with("",
                "The pairs also as tab-separated text: query_id, target_id, score (IDs from FPS files, else "
                "row numbers), a header line first"),
      DeckKey::output_path("write.top_k.path", {".npy"}).must().with("", "The top-k lists as a .npy file of records"),
      DeckKey::integer("write.top_k.k", Json(), 1, max_dim).must().with("partners", "Partners per row"),
      DeckKey::real("write.top_k.min", 0.0, 0, std::numeric_limits<double>::max())
          .with("",
                "Only partners whose value is at least this: each row's k best at or above it (fewer where "
                "fewer reach it; chemfp's -k with -t); 0: no minimum"),
      DeckKey::output_path("write.top_k.text", {".tsv", ".txt"})
          .with("",
                "The lists also as tab-separated text: query_id, rank (from 1), target_id, score (IDs from FPS "
                "files, else row numbers), a header line first"),
      DeckKey::output_path("write.top_k.simsearch", {".txt", ".simsearch"})
          .with("",
                "The lists also in chemfp's simsearch format (#Simsearch/1): a line per query, count, query_id, "
                "then target_id, score of each partner (a similarity, not counts)"),
  };
  const auto sections = std::find_if(keys.begin(), keys.end(), [](const DeckKey& k) { return k.key == "write.top_k"; });
  keys.insert(sections + 1, outputs.begin(), outputs.end());
}

// gram.similarity and its settings, before gram.triangle.
void add_similarity(std::vector<DeckKey>& keys) {
  const std::vector<DeckKey> similarity = {
      DeckKey::choice("similarity", "counts", similarity_names())
          .with("",
                "What C holds: the counts, or a similarity computed from them (tanimoto: jaccard; tversky: "
                "with gram.tversky)"),
      DeckKey::real("empty_similarity", 0.0, 0.0, 1.0)
          .with("", "The similarity of two rows without ones (0/0): 0, or 1 as RDKit's BulkTanimotoSimilarity gives"),
      DeckKey::section("tversky", "The weights of similarity tversky: c / (c + alpha (|a| - c) + beta (|b| - c))"),
      DeckKey::real("tversky.alpha", Json(), 0, std::numeric_limits<double>::max())
          .must()
          .with("", "Weight of the ones of A's row (the query) that the other row lacks"),
      DeckKey::real("tversky.beta", Json(), 0, std::numeric_limits<double>::max())
          .must()
          .with("", "Weight of the ones of the other row (the target) that A's row lacks"),
      DeckKey::boolean("exclude_self", false)
          .with("",
                "With B: top-k, pairs and count_at_least leave out each query's own ID among the targets "
                "(FPS files as A and B)")};
  const auto triangle = std::find_if(keys.begin(), keys.end(), [](const DeckKey& k) { return k.key == "triangle"; });
  keys.insert(triangle, similarity.begin(), similarity.end());
}

}  // namespace

const KernelDeclaration& declaration() {
  static const KernelDeclaration d = [] {
    KernelDeclaration k;
    k.name = "gram";
    k.summary = "C = A A^T (or A B^T) of 0/1 matrices by AND+popcount of 64-bit words, with similarities, top-k, pairs";
    auto& keys = k.keys;
    add_input(keys, "A", "The 0/1 matrix A (absent: random 1024 x 4096)");
    add_input(keys, "B", "A second matrix: C = A B^T (absent: C = A A^T)");
    const double max_dim = static_cast<double>(detail::kMaxDim);
    const std::vector<DeckKey> rest = {
        DeckKey::integer("row_slice", "auto", 1).or_auto().with("rows", "Rows of C per slice; auto fits memory_budget"),
        DeckKey::byte_size("memory_budget", "auto", 1e18)
            .or_auto()
            .with("bytes", "Device memory for a slice of C; auto is half of what this rank may use"),
        DeckKey::choice("triangle", "full", {"full", "upper"}).with("", "upper: only j >= i (symmetric C only)"),
        DeckKey::section("write", "Output files (relative to --out unless absolute)"),
        DeckKey::output_path("write.C", {".npy"}).with("", "C as a .npy file"),
        DeckKey::output_path("write.summary", {".json"}).with("", "A JSON summary of C (sums, histogram, checksums)"),
        DeckKey::section("write.pairs", "Every pair whose value is at least min"),
        DeckKey::section("write.top_k", "Each row's k largest partners"),
        DeckKey::real_list("write.count_at_least", 0.0, kMaxThresholds)
            .with("", "Count the entries of C at least each of these values"),
        DeckKey::boolean("baseline", false).with("", "Also time KokkosBlas::gemm on float copies of A"),
        DeckKey::integer("baseline_rows", 512, 1, max_dim).with("rows", "Rows of A the baseline multiplies"),
        DeckKey::integer("repeat", 1, 1, 1000).with("", "Timed repeats; the best one is reported"),
        DeckKey::boolean("prune", false)
            .with("",
                  "With B, every output with a minimum above 0 (pairs, top-k with min, count_at_least), none "
                  "needing all of C, replicated: skip the tiles of popcount-sorted rows whose similarity bound is "
                  "below it (the same outputs; faster where many tiles go, docs/similarity-search.md)"),
        DeckKey::boolean("probe", false)
            .with("",
                  "Measure the AND+popcount (or tensor-core) roof before and after the computation and report the "
                  "figure of merit as a fraction of it (the benchmark decks do); off, no roof is reported"),
        DeckKey::choice("engine", "auto", {"auto", "popcount", "tensor_core"})
            .with("", "tensor_core: 1-bit mma on NVIDIA GPUs (sm_80+); auto: it where built, else popcount"),
        DeckKey::choice("tensor_core_tile", "auto", tensor_core_tile_options())
            .with("",
                  "The tensor-core kernel: 64 x 64 blocks, or 128 x 128 with each warp's 32 x 64 or 64 x 64 in "
                  "registers, or (warpgroup64x128) the wgmma engine's 128 x 128 with each warpgroup's 64 x 128, "
                  "in CUDA builds with KMINI_WGMMA_ENGINE (on for Hopper) on H100 and H200 only, refused "
                  "elsewhere; auto: the backend's best"),
        DeckKey::choice("micro_kernel", "auto", {"auto", "portable", "avx2", "avx512bw", "avx512_vpopcntdq"})
            .with("", "Host AND+popcount loop; auto: the best the build's instruction set has"),
        DeckKey::choice("distribution", "replicated", {"replicated", "ring", "auto"})
            .with("",
                  "replicated: every rank holds A; ring: a 1/P share each, passed around; auto: replicated if it fits"),
        DeckKey::choice("ring_schedule", "auto", {"auto", "circulant", "slices"})
            .with("", "The ring's order: circulant block pairs (no C written) or slices; auto picks"),
    };
    keys.insert(keys.end(), rest.begin(), rest.end());
    add_similarity(keys);
    add_sparse_outputs(keys);
    k.fom = {"useful_bit_ops_per_s", "bitop/s",
             "one AND+popcount bit pair of a requested entry of C (rows x targets x cols)", kRoofPopcount, true};
    k.decks = {"inputs/gram.yaml",
               "inputs/gram_100k.yaml",
               "inputs/bench/gram.yaml",
               "inputs/bench/gram_10k.yaml",
               "inputs/gpu/gram_tensor_core.yaml",
               "inputs/gpu/gram_10k_tensor_core.yaml"};
    k.scaling = {"A.random.rows", Growth::Sqrt, "the work is proportional to rows^2 x cols"};
    k.figures = {{"useful bit-ops/s", {"useful_bit_ops_per_s"}, "Tbit-ops/s", 1e-12},
                 {"executed bit-ops/s", {"executed_bit_ops_per_s"}, "Tbit-ops/s", 1e-12},
                 {"AND+popcount peak (probe)", {"probe_and_popcount_peak_bit_ops_per_s"}, "Tbit-ops/s", 1e-12}};
    // compute-sanitizer's racecheck is slow on shared memory (a 130 x 700 A took over
    // 150 s): 70 x 300, two slices of C.
    k.small_run = {"gram.A={random: {rows: 70, cols: 300, density: 0.3, seed: 7}}", "gram.row_slice=64"};
    return k;
  }();
  return d;
}

}  // namespace kmini::gram
