// The Gram kernels on the category's execution space against the host
// reference (plain bit loops): edge shapes, densities, slices, packed input,
// Jaccard, summaries, the slice plan and the multi-block .npy writer.
#include "gram/gram_test_support.hpp"

namespace kmini {

namespace {

void expect_matches_reference(const Source& s, std::int64_t h) {
  PackedView<MemSpace> a("a", s.rows, words_allocated(s.cols));
  pack_random(Exec(), a, s.rows, s.cols, s.density, s.seed);
  const auto ref = reference::pack(host_rows(s, 0, s.rows), s.rows, s.cols);
  for (Engine engine : test_engines())
    for (MicroKernel mk : test_micro_kernels()) {
      if (engine == Engine::TensorCore && mk != MicroKernel::Portable) continue;
      const auto c = gram_by_slices(a, s.rows, h, engine, mk);
      std::int64_t bad = 0;
      for (std::int64_t i = 0; i < s.rows; ++i)
        for (std::int64_t j = 0; j < s.rows; ++j)
          if (c[i * s.rows + j] != reference::count(ref, i, j)) ++bad;
      EXPECT_EQ(bad, 0) << s.rows << "x" << s.cols << " density " << s.density << " slice " << h << " engine "
                        << engine_name(engine) << " micro-kernel " << micro_kernel_name(mk);
    }
}

}  // namespace

TEST(TEST_CATEGORY, Gram_EdgeShapesAndDensitiesMatchHostReference) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes{{1, 1},  {5, 1},    {3, 63},    {7, 64},
                                                                  {9, 65}, {67, 127}, {130, 200}, {65, 2049}};
  for (const auto& [rows, cols] : shapes)
    for (double density : {0.0, 1.0, 0.37}) expect_matches_reference(random_source(rows, cols, density, 3), rows);
}

// Rows longer than a chunk (host: 256 words): two full chunks and a shorter
// last one, each adding into the C tile; rows(A) not a multiple of the tile.
TEST(TEST_CATEGORY, Gram_RowsLongerThanAChunkMatchHostReference) {
  expect_matches_reference(random_source(70, 40000, 0.37, 5), 70);
  expect_matches_reference(random_source(70, 40000, 0.37, 5), 33);
}

// Every micro-kernel this build contains (behind the dispatch) gives the plain
// popcount loop's sums, added to what c held: run lengths of one vector, of
// one and more Harley-Seal blocks (64 and 128 words) with a tail, a host
// chunk, and past it. (Per target, each instruction set: tests/gram/micro_kernels/.)
TEST(TEST_CATEGORY, Gram_MicroKernelDispatchMatchesPortableAndPlainLoop) {
  using P = Tuning;
  constexpr int kWords = 264, kStride = 5;
  std::vector<Word> rows(8 * kWords);
  for (std::size_t e = 0; e < rows.size(); ++e) rows[e] = random::hash(11, e) & random::hash(12, e);  // density 1/4
  rows[3 * kWords + 7] = ~Word(0);
  const Word* ra[4];
  const Word* rb[4];
  for (int r = 0; r < 4; ++r) {
    ra[r] = &rows[r * kWords];
    rb[r] = &rows[(4 + r) * kWords];
  }
  for (int nk : {8, 16, 64, 72, 128, 136, 256, 264}) {
    std::vector<std::uint32_t> plain(4 * kStride);
    for (int e = 0; e < 4 * kStride; ++e) plain[e] = 1000u + e;
    for (int r = 0; r < 4; ++r)
      for (int s = 0; s < 4; ++s)
        for (int k = 0; k < nk; ++k)
          for (Word x = ra[r][k] & rb[s][k]; x != 0; x &= x - 1) ++plain[r * kStride + s];
    for (MicroKernel mk : test_micro_kernels()) {
      std::vector<std::uint32_t> got(4 * kStride);
      for (int e = 0; e < 4 * kStride; ++e) got[e] = 1000u + e;
      with_micro_kernel(mk, [&](auto k) { rows_block<P, 0, decltype(k)::value>(ra, rb, nk, got.data(), kStride); });
      EXPECT_EQ(got, plain) << "nk " << nk << " (" << micro_kernel_name(mk) << ")";
    }
    std::vector<std::uint32_t> fixed(4 * kStride);
    for (int e = 0; e < 4 * kStride; ++e) fixed[e] = 1000u + e;
    if (nk == P::chunk) rows_block<P, P::chunk>(ra, rb, nk, fixed.data(), kStride);  // auto's, compile-time count
    else rows_block<P, 0>(ra, rb, nk, fixed.data(), kStride);
    EXPECT_EQ(fixed, plain) << "nk " << nk << " (auto: " << P::micro_kernel << ")";
  }
}

// The staged micro-tile's form (GPUs): panels word-major, word k of row r at
// k * KStride + r, the sums scattered with row and column steps in the C tile.
TEST(TEST_CATEGORY, Gram_PortableRowBlockReadsWordMajorPanels) {
  using P = Tuning;
  constexpr int kWords = 40, kKStride = 9, kRow = 7, kCol = 2;  // 8 rows + 1 word of padding per k
  std::vector<Word> panel(kWords * kKStride, ~Word(0));
  for (int k = 0; k < kWords; ++k)
    for (int row = 0; row < 8; ++row) panel[k * kKStride + row] = random::hash(13, k * 8 + row);
  const Word* ra[4];
  const Word* rb[4];
  for (int r = 0; r < 4; ++r) {
    ra[r] = &panel[r];
    rb[r] = &panel[4 + r];
  }
  std::vector<std::uint32_t> got(4 * kRow, 5u), plain(4 * kRow, 5u);
  rows_block_portable<P, 0, kKStride>(ra, rb, kWords, got.data(), kRow, kCol);
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s)
      for (int k = 0; k < kWords; ++k)
        for (Word x = ra[r][k * kKStride] & rb[s][k * kKStride]; x != 0; x &= x - 1) ++plain[r * kRow + s * kCol];
  EXPECT_EQ(got, plain);
}

TEST(TEST_CATEGORY, Gram_SliceHeightsBelowTileAboveRowsAndUneven) {
  for (std::int64_t h : {1, 5, 63, 64, 100, 1000}) expect_matches_reference(random_source(150, 300, 0.5, 9), h);
}

TEST(TEST_CATEGORY, Gram_AllOnesGivesColsEverywhere) {
  const std::int64_t rows = 70, cols = 129;
  PackedView<MemSpace> a("a", rows, words_allocated(cols));
  pack_random(Exec(), a, rows, cols, 1.0, 1);
  for (auto v : gram_by_slices(a, rows, 64)) ASSERT_EQ(v, cols);
}

TEST(TEST_CATEGORY, Gram_PackedAndUnpackedBytesGiveTheSameC) {
  const std::int64_t rows = 41, cols = 77, nb = (cols + 7) / 8;
  const Source s = random_source(rows, cols, 0.45, 21);
  const auto bits = host_rows(s, 0, rows);
  Kokkos::View<std::uint8_t**, Kokkos::LayoutRight, MemSpace> unpacked("u", rows, cols), packed_bytes("p", rows, nb);
  auto hu = Kokkos::create_mirror_view(unpacked);
  auto hp = Kokkos::create_mirror_view(packed_bytes);
  Kokkos::deep_copy(hp, 0);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t k = 0; k < cols; ++k) {
      hu(i, k) = bits[i * cols + k];
      if (bits[i * cols + k]) hp(i, k / 8) |= static_cast<std::uint8_t>(0x80 >> (k % 8));  // numpy packbits order
    }
  Kokkos::deep_copy(unpacked, hu);
  Kokkos::deep_copy(packed_bytes, hp);
  PackedView<MemSpace> a1("a1", rows, words_allocated(cols)), a2("a2", rows, words_allocated(cols));
  pack_unpacked_bytes(Exec(), a1, unpacked, 0);
  pack_packed_bytes(Exec(), a2, packed_bytes, 0);
  const auto c1 = gram_by_slices(a1, rows, 16), c2 = gram_by_slices(a2, rows, 64);
  EXPECT_EQ(c1, c2);
  const auto ref = reference::pack(bits, rows, cols);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < rows; ++j) ASSERT_EQ(c1[i * rows + j], reference::count(ref, i, j));
}

TEST(TEST_CATEGORY, Gram_JaccardMatchesFormulaAndEmptyRowsGiveZero) {
  const std::int64_t rows = 20, cols = 90;
  Source s = random_source(rows, cols, 0.3, 4);
  PackedView<MemSpace> a("a", rows, words_allocated(cols));
  pack_random(Exec(), a, rows, cols, s.density, s.seed);
  clear_row(a, 2);  // rows 2 and 5 empty
  clear_row(a, 5);
  Kokkos::View<std::int32_t*, MemSpace> ones("ones", rows), counts("c", rows * rows);
  Kokkos::View<float*, MemSpace> sim("s", rows * rows);
  row_ones(Exec(), a, ones);
  const SliceGeometry g{rows, 0, rows};
  gram_slice(Exec(), a, g, counts);
  similarity_slice(Exec(), Similarity::Jaccard, counts, ones, ones, g, sim);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), counts);
  auto hs = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sim);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < rows; ++j) {
      const double c = hc(i * rows + j), u = hc(i * rows + i) + hc(j * rows + j) - c;
      EXPECT_FLOAT_EQ(hs(i * rows + j), u == 0 ? 0.0f : static_cast<float>(c / u));
    }
  EXPECT_EQ(hs(2 * rows + 5), 0.0f);
  EXPECT_EQ(hs(2 * rows + 2), 0.0f);
  EXPECT_EQ(hs(0), 1.0f);
}

TEST(TEST_CATEGORY, Gram_SummaryRowSumsHistogramAndChecksumAreSliceIndependent) {
  const std::int64_t rows = 90, cols = 100;
  const Source s = random_source(rows, cols, 0.5, 8);
  PackedView<MemSpace> a("a", rows, words_allocated(cols));
  pack_random(Exec(), a, rows, cols, s.density, s.seed);
  const auto ref = reference::pack(host_rows(s, 0, rows), rows, cols);
  std::uint64_t first_checksum = 0;
  for (std::int64_t h : {7, 64, 90}) {
    Kokkos::View<std::int32_t*, MemSpace> counts("c", h * rows);
    Kokkos::View<std::int64_t*, MemSpace> sums("sums", rows);
    Kokkos::View<std::uint64_t*, MemSpace> hist("hist", 64);
    std::uint64_t checksum = 0;
    for (std::int64_t r0 = 0; r0 < rows; r0 += h) {
      const SliceGeometry g{rows, r0, std::min(rows, r0 + h)};
      gram_slice(Exec(), a, g, counts);
      checksum += summarise_slice(Exec(), counts, g, cols, sums, hist);
    }
    auto hsums = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), sums);
    auto hhist = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), hist);
    std::uint64_t expect_checksum = 0, total = 0;
    std::vector<std::uint64_t> expect_hist(64, 0);
    for (std::int64_t i = 0; i < rows; ++i) {
      std::int64_t row = 0;
      for (std::int64_t j = 0; j < rows; ++j) {
        const std::int64_t c = reference::count(ref, i, j);
        row += c;
        expect_hist[static_cast<std::size_t>(c * 64 / (cols + 1))]++;
        if (j >= i) expect_checksum += static_cast<std::uint64_t>(c) * checksum_weight(i, j);
      }
      EXPECT_EQ(hsums(i), row) << "row " << i << " slice " << h;
    }
    for (int b = 0; b < 64; ++b) {
      EXPECT_EQ(hhist(b), expect_hist[static_cast<std::size_t>(b)]);
      total += hhist(b);
    }
    EXPECT_EQ(total, static_cast<std::uint64_t>(rows * rows));
    EXPECT_EQ(checksum, expect_checksum);
    if (h == 7) first_checksum = checksum;
    EXPECT_EQ(checksum, first_checksum);
  }
}

TEST(TEST_CATEGORY, Gram_PlanCoversRowsBalancesRanksAndRespectsBudget) {
  Config c;
  c.a = random_source(10000, 640, 0.5, 1);
  c.row_slice = 300;
  const Plan p = make_plan(c, 3);
  std::int64_t next = 0;
  std::vector<double> load(3, 0.0);
  for (const auto& s : p.slices) {
    EXPECT_EQ(s.r0, next);
    next = s.r1;
    load[static_cast<std::size_t>(s.rank)] += s.work;
  }
  EXPECT_EQ(next, 10000);
  const double mx = *std::max_element(load.begin(), load.end()), mn = *std::min_element(load.begin(), load.end());
  EXPECT_LT(mx / mn, 1.1);  // triangular work, balanced
  // auto: packed A + one slice within the budget, slice height a multiple of the tile.
  c.row_slice = 0;
  c.memory_budget = 8e6;
  const Plan q = make_plan(c, 1);
  EXPECT_LE(q.packed_bytes + q.slice_bytes, c.memory_budget);
  EXPECT_EQ(q.height % Tuning::tile, 0);
  EXPECT_GT(q.height, 0);
  c.memory_budget = 1000;
  KMINI_EXPECT_THROW_MSG(make_plan(c, 1), UsageError, "gram.memory_budget");
  // A plan of more than 2^20 slices is refused instead of listed (the
  // generator's 2^31 rows in slices of 8 planned for minutes).
  c.a = random_source(std::int64_t(1) << 21, 64, 0.5, 1);
  c.row_slice = 2;
  EXPECT_EQ(make_plan(c, 2).slices.size(), std::size_t(1) << 20);
  c.row_slice = 1;
  KMINI_EXPECT_THROW_MSG(
      make_plan(c, 2), UsageError,
      "gram.row_slice: slices of 1 rows make 2097152 slices of 2097152 rows, expected at most 1048576");
}

TEST(TEST_CATEGORY, Gram_DistributedWriterWritesBlocksInAnyOrder) {
  const std::string path = test::work_path("gram_blocks.npy");
  {
    npy::DistributedWriter w(MPI_COMM_WORLD, path, npy::DType::I4, {3, 4});
    const std::vector<std::int32_t> bottom{8, 9, 10, 11}, top{0, 1, 2, 4, 5, 6}, corner{3, 7};
    npy::DistributedWriter::Block b1{2, 0, 1, 4, bottom.data()}, b2{0, 0, 2, 3, top.data()},
        b3{0, 3, 2, 1, corner.data()};
    w.write_round(&b1);
    w.write_round(nullptr);
    w.write_round(&b2);
    w.write_round(&b3);
    w.commit();
  }
  const auto v = npy::read_all<std::int32_t>(npy::read_info(path));
  for (std::int32_t e = 0; e < 12; ++e) EXPECT_EQ(v[static_cast<std::size_t>(e)], e);
  const std::string path1 = test::work_path("gram_blocks_1d.npy");
  {
    npy::DistributedWriter w(MPI_COMM_WORLD, path1, npy::DType::F4, {5});
    const std::vector<float> tail{3, 4}, head{0, 1, 2};
    npy::DistributedWriter::Block b1{0, 3, 1, 2, tail.data()}, b2{0, 0, 1, 3, head.data()};
    w.write_round(&b1);
    w.write_round(&b2);
    w.commit();
  }
  const auto f = npy::read_all<float>(npy::read_info(path1));
  for (int e = 0; e < 5; ++e) EXPECT_EQ(f[static_cast<std::size_t>(e)], float(e));
}

// A (rows x cols) and B (targets x cols) of random bits at densities da and
// db, packed on the device, with their host references.
struct RandomPair {
  PackedView<MemSpace> a, b;
  reference::HostPacked ra, rb;
};
inline RandomPair random_pair(std::int64_t rows, std::int64_t targets, std::int64_t cols, double da, double db,
                              std::uint64_t seed) {
  const Source sa = random_source(rows, cols, da, seed), sb = random_source(targets, cols, db, seed + 1);
  RandomPair p{
      PackedView<MemSpace>("a", rows, words_allocated(cols)), PackedView<MemSpace>("b", targets, words_allocated(cols)),
      reference::pack(host_rows(sa, 0, rows), rows, cols), reference::pack(host_rows(sb, 0, targets), targets, cols)};
  pack_random(Exec(), p.a, rows, cols, sa.density, sa.seed);
  pack_random(Exec(), p.b, targets, cols, sb.density, sb.seed);
  return p;
}

// C = A B^T (no symmetry: every tile, edges in both directions) by every
// engine of this build against the host reference, slices smaller than a
// tile and rows not a multiple of the mma's 256 bits.
TEST(TEST_CATEGORY, Gram_EveryEngineMatchesHostReferenceForABt) {
  const std::int64_t rows = 77, targets = 45, cols = 333;
  const RandomPair in = random_pair(rows, targets, cols, 0.4, 0.6, 21);
  const auto &a = in.a, &b = in.b;
  const auto &ra = in.ra, &rb = in.rb;
  for (Engine engine : test_engines())
    for (std::int64_t h : {std::int64_t(13), rows}) {
      Kokkos::View<std::int32_t*, MemSpace> out("out", h * targets);
      std::int64_t bad = 0;
      for (std::int64_t r0 = 0; r0 < rows; r0 += h) {
        const SliceGeometry g{rows, r0, std::min(rows, r0 + h), targets};
        Kokkos::deep_copy(out, -7);
        gram_slice(Exec(), a, b, g, out, engine);
        auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
        for (std::int64_t i = g.r0; i < g.r1; ++i)
          for (std::int64_t j = 0; j < targets; ++j)
            if (ho((i - r0) * targets + j) != reference::count(ra, i, rb, j)) ++bad;
      }
      EXPECT_EQ(bad, 0) << "engine " << engine_name(engine) << ", slice " << h;
    }
}

// Every gram.tensor_core_tile against the host reference where this build has
// the tensor-core engine (the wgmma engine's where it runs: H100, H200): symmetric slices (the triangle and its mirror)
// at heights below, across and above the 128-row blocks, and A B^T, with k not a multiple of a 16-word stage.
TEST(TEST_CATEGORY, Gram_EveryTensorCoreTileMatchesHostReference) {
  const auto engines = test_engines();
  if (std::find(engines.begin(), engines.end(), Engine::TensorCore) == engines.end())
    GTEST_SKIP() << "this build has no tensor-core engine on this execution space";
  const std::int64_t rows = 300, targets = 141, cols = 1100;
  const RandomPair in = random_pair(rows, targets, cols, 0.3, 0.6, 41);
  const auto &a = in.a, &b = in.b;
  const auto &ra = in.ra, &rb = in.rb;
  for (TensorCoreTile tile : kTensorCoreTiles) {
    if (tile == TensorCoreTile::Warpgroup64x128 && !wgmma::unavailable().empty()) continue;  // configure() refuses it
    for (std::int64_t h : {std::int64_t(50), std::int64_t(130), rows}) {
      std::int64_t bad = 0;
      for (std::int64_t r0 = 0; r0 < rows; r0 += h) {
        const SliceGeometry g{rows, r0, std::min(rows, r0 + h)};
        Kokkos::View<std::int32_t*, MemSpace> out("out", g.height() * g.width());
        Kokkos::deep_copy(out, -7);
        gram_slice(Exec(), a, g, out, Engine::TensorCore, kAutoMicroKernel, tile);
        auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
        for (std::int64_t i = g.r0; i < g.r1; ++i)
          for (std::int64_t j = g.col0(); j < rows; ++j)
            if (ho((i - g.r0) * g.width() + (j - g.col0())) != reference::count(ra, i, j)) ++bad;
      }
      EXPECT_EQ(bad, 0) << "A A^T, tile " << tensor_core_tile_name(tile) << ", slice " << h;
    }
    const SliceGeometry g{rows, 0, rows, targets};
    Kokkos::View<std::int32_t*, MemSpace> out("out", rows * targets);
    Kokkos::deep_copy(out, -7);
    gram_slice(Exec(), a, b, g, out, Engine::TensorCore, kAutoMicroKernel, tile);
    auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < targets; ++j)
        if (ho(i * targets + j) != reference::count(ra, i, rb, j)) ++bad;
    EXPECT_EQ(bad, 0) << "A B^T, tile " << tensor_core_tile_name(tile);
  }
}

// The wgmma engine where it runs (H100, H200): k over more stages than its
// four buffers (2700 columns: 43 words, 6 stages) and more block tiles (18 x
// 18 of A B^T) than the blocks its persistent grid keeps resident (two an
// SM), so that buffers are reused and blocks take tiles in turn.
TEST(TEST_CATEGORY, Gram_WgmmaEngineOverManyStagesAndTiles) {
  if (!wgmma::unavailable().empty()) GTEST_SKIP() << "the wgmma engine: " << wgmma::unavailable();
  const std::int64_t rows = 2200, targets = 2200, cols = 2700;
  const RandomPair in = random_pair(rows, targets, cols, 0.3, 0.5, 43);
  const auto &a = in.a, &b = in.b;
  const auto &ra = in.ra, &rb = in.rb;
  const SliceGeometry g{rows, 0, rows, targets};
  Kokkos::View<std::int32_t*, MemSpace> out("out", rows * targets);
  Kokkos::deep_copy(out, -7);
  gram_slice(Exec(), a, b, g, out, Engine::TensorCore, kAutoMicroKernel, TensorCoreTile::Warpgroup64x128);
  auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < targets; ++j)
      if (ho(i * targets + j) != reference::count(ra, i, rb, j)) ++bad;
  EXPECT_EQ(bad, 0);
}

// gram.distribution: ring. A slice assembled from chunks held in separate
// compact views (rows at an offset), as the ring computes it: the slice's own
// chunk as the triangular diagonal block, the chunks below it as rectangles
// (one input), or every chunk of B as a rectangle (A B^T); every element
// against the host reference, nothing outside the slice's columns written.
TEST(TEST_CATEGORY, Gram_RingWindowsAssembleSlicesFromChunksAtRowOffsets) {
  const std::int64_t rows = 150, targets = 97, cols = 333, h = 40;
  const Source sa = random_source(rows, cols, 0.4, 31), sb = random_source(targets, cols, 0.55, 32);
  const auto ra = reference::pack(host_rows(sa, 0, rows), rows, cols);
  const auto rb = reference::pack(host_rows(sb, 0, targets), targets, cols);
  // One compact view per chunk of h rows, generated at its row offset.
  const auto chunks_of = [&](const Source& src) {
    std::vector<std::pair<std::int64_t, PackedView<MemSpace>>> out;
    for (std::int64_t r0 = 0; r0 < src.rows; r0 += h) {
      const std::int64_t n = std::min(h, src.rows - r0);
      PackedView<MemSpace> v("chunk", n, words_allocated(cols));
      pack_random(Exec(), v, n, cols, src.density, src.seed, r0, 0);
      out.emplace_back(r0, v);
    }
    return out;
  };
  const auto a_chunks = chunks_of(sa), b_chunks = chunks_of(sb);
  for (Engine engine : test_engines())
    for (bool two : {false, true}) {
      std::int64_t bad = 0;
      for (const auto& [r0, own] : a_chunks) {
        const std::int64_t r1 = r0 + static_cast<std::int64_t>(own.extent(0));
        const std::int64_t col0 = two ? 0 : r0, width = two ? targets : rows - r0;
        Kokkos::View<std::int32_t*, MemSpace> out("out", (r1 - r0) * width);
        Kokkos::deep_copy(out, -7);
        for (const auto& [c0, chunk] : two ? b_chunks : a_chunks) {
          const std::int64_t c1 = c0 + static_cast<std::int64_t>(chunk.extent(0));
          if (!two && c1 <= r0) continue;
          TileWindow w;
          w.r0 = r0;
          w.r1 = r1;
          w.c0 = c0;
          w.c1 = c1;
          w.triangular = !two && c0 == r0;
          w.a_base = r0;
          w.b_base = c0;
          w.out_col0 = col0;
          w.out_width = width;
          gram_window(Exec(), own, chunk, w, out, engine);
        }
        auto ho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out);
        for (std::int64_t i = r0; i < r1; ++i)
          for (std::int64_t j = col0; j < col0 + width; ++j) {
            const std::int64_t want = two ? reference::count(ra, i, rb, j) : reference::count(ra, i, j);
            if (ho((i - r0) * width + (j - col0)) != want) ++bad;
          }
      }
      EXPECT_EQ(bad, 0) << (two ? "A B^T" : "A A^T") << ", engine " << engine_name(engine);
    }
}

// The ring plan: A's chunks are the slices, held by the slice's rank; every
// rank holds about 1/P of the rows; B dealt round robin; the traffic of a
// round is every travelling chunk but the next rank's, at each rank.
TEST(TEST_CATEGORY, Gram_RingPlanHoldsAShareAndCountsTheTraffic) {
  Config c;
  c.a = random_source(1000, 640, 0.5, 1);
  c.b = random_source(333, 640, 0.5, 2);
  c.row_slice = 64;
  c.distribution = Distribution::Ring;
  c.ring_schedule = RingSchedule::Slices;  // no outputs: auto would pick the circulant
  const int ranks = 3;
  const Plan p = make_plan(c, ranks);
  ASSERT_TRUE(p.ring());
  ASSERT_EQ(p.a_chunks.size(), p.slices.size());
  std::vector<std::int64_t> held(ranks, 0);
  for (std::size_t i = 0; i < p.slices.size(); ++i) {
    EXPECT_EQ(p.a_chunks[i].r0, p.slices[i].r0);
    EXPECT_EQ(p.a_chunks[i].rank, p.slices[i].rank);
    EXPECT_EQ(p.a_chunks[i].local, held[static_cast<std::size_t>(p.slices[i].rank)]);
    held[static_cast<std::size_t>(p.slices[i].rank)] += p.a_chunks[i].rows();
  }
  for (int q = 0; q < ranks; ++q) {
    EXPECT_EQ(p.a_held(q), held[static_cast<std::size_t>(q)]);
    EXPECT_LE(p.a_held(q), (1000 / 64 / ranks + 1) * 64);  // one slice per round
  }
  EXPECT_EQ(p.b_chunks.size(), 6u);  // 333 rows in chunks of 64
  EXPECT_EQ(p.b_held(0) + p.b_held(1) + p.b_held(2), 333);
  EXPECT_EQ(p.b_held(2), 64 + 13);  // chunks 2 and 5 (rows 128..191, 320..332)
  const double row_bytes = double(words_allocated(640)) * 8;
  const DistributionCost cost = distribution_cost(c, p, ranks);
  double most = 0;
  for (int q = 0; q < ranks; ++q) most = std::max(most, double(333 - p.b_held((q + 1) % ranks)));
  EXPECT_DOUBLE_EQ(cost.sent_bytes, most * row_bytes * double(p.rounds()));
  // Replicated holds all of A and B; ring a share and two buffers of the tallest travelling chunk.
  const Plan r = make_plan_for(c, ranks, Distribution::Replicated);
  EXPECT_DOUBLE_EQ(r.packed_bytes, (1000 + 333) * row_bytes);
  std::int64_t most_held = 0;
  for (int q = 0; q < ranks; ++q) most_held = std::max(most_held, p.a_held(q) + p.b_held(q));
  // Messages: pieces of at most a quarter of a share (333 / 12 = 28 rows), one chunk at least:
  // here every chunk of B is a piece of its own.
  for (int q = 0; q < ranks; ++q) {
    const auto& pieces = p.pieces[static_cast<std::size_t>(q)];
    ASSERT_EQ(pieces.size(), p.holdings[static_cast<std::size_t>(q)].size());
    for (std::size_t i = 0; i < pieces.size(); ++i) EXPECT_EQ(pieces[i], std::make_pair(i, i + 1));
  }
  EXPECT_EQ(p.message_rows, 64);
  EXPECT_DOUBLE_EQ(p.packed_bytes, double(most_held + 2 * 64) * row_bytes);
  // Pieces of at most kRingPieceBytes of 20 000-word rows (160 000 bytes each), or one chunk.
  c.a = random_source(1000, 64 * 20000, 0.5, 1);
  c.b = Source{};
  c.row_slice = 20;
  const Plan w = make_plan(c, ranks);
  const auto piece_rows = static_cast<std::int64_t>(kRingPieceBytes / (double(words_allocated(64 * 20000)) * 8));
  EXPECT_EQ(w.message_rows, piece_rows / 20 * 20);
  for (int q = 0; q < ranks; ++q) {
    std::size_t next = 0;
    for (const auto& [b, e] : w.pieces[static_cast<std::size_t>(q)]) {
      EXPECT_EQ(b, next);
      EXPECT_GT(e, b);
      next = e;
    }
    EXPECT_EQ(next, w.holdings[static_cast<std::size_t>(q)].size());
  }
}

// The circulant plan (gram.ring_schedule): over all ranks, pieces and steps
// the windows cover every element of C exactly once up to symmetry (one
// input: each unordered pair i <= j once, the diagonal block triangular; with
// B every (i, j)), each window inside its rank's rows and one piece of the
// block of rank + t; the ranks' work within a block pair; blocks of 1/P.
TEST(TEST_CATEGORY, Gram_CirculantPlanCoversEveryPairOnce) {
  for (const bool two : {false, true})
    for (int ranks = 1; ranks <= 6; ++ranks)
      for (const std::int64_t rows : {std::int64_t(1), std::int64_t(5), std::int64_t(41), std::int64_t(300)}) {
        Config c;
        c.a = random_source(rows, 257, 0.5, 1);
        if (two) c.b = random_source(rows / 2 + 3, 257, 0.5, 2);
        c.row_slice = 7;
        c.distribution = Distribution::Ring;
        const Plan p = make_plan(c, ranks);
        ASSERT_TRUE(p.circulant());
        EXPECT_EQ(p.steps, two ? ranks : ranks / 2 + 1);
        EXPECT_EQ(p.rounds(), p.steps);
        const std::int64_t targets = two ? c.b.rows : rows;
        std::vector<int> hits(static_cast<std::size_t>(rows * targets), 0);
        std::vector<double> work(static_cast<std::size_t>(ranks), 0.0);
        std::vector<CirculantWindow> windows;
        for (int r = 0; r < ranks; ++r) {
          EXPECT_EQ(p.a_held(r), Plan::block_begin(rows, ranks, r + 1) - Plan::block_begin(rows, ranks, r));
          for (std::int64_t j = 0; j < p.pieces_per_block; ++j)
            for (std::int64_t t = 0; t < p.steps; ++t) {
              p.circulant_windows(r, j, t, two, windows);
              const auto piece = p.piece(static_cast<int>((r + t) % ranks), j, two);
              for (const auto& w : windows) {
                EXPECT_GE(w.r0, Plan::block_begin(rows, ranks, r));
                EXPECT_LE(w.r1, Plan::block_begin(rows, ranks, r + 1));
                EXPECT_LE(w.r1 - w.r0, c.row_slice);
                EXPECT_GE(w.r0, p.slices[w.slice].r0);  // inside the slice whose work it adds to
                EXPECT_LE(w.r1, p.slices[w.slice].r1);
                EXPECT_GE(w.c0, piece.first);
                EXPECT_LE(w.c1, piece.second);
                EXPECT_EQ(w.mirror, !two);
                EXPECT_EQ(w.slot, t == 0 ? 0 : (two ? 0 : t));
                for (std::int64_t i = w.r0; i < w.r1; ++i)
                  for (std::int64_t k = w.triangular ? i : w.c0; k < w.c1; ++k) {
                    const std::int64_t a = two ? i : std::min(i, k), b = two ? k : std::max(i, k);
                    ++hits[static_cast<std::size_t>(a * targets + b)];
                    work[static_cast<std::size_t>(r)] += 1;
                  }
              }
            }
        }
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t k = two ? 0 : i; k < targets; ++k)
            ASSERT_EQ(hits[static_cast<std::size_t>(i * targets + k)], 1)
                << "C(" << i << ", " << k << "), " << rows << " rows, " << ranks << " ranks" << (two ? ", A B^T" : "");
        // Balanced within a block pair (the diagonal: half of one).
        const double block = double(rows) / ranks + 1, most = *std::max_element(work.begin(), work.end()),
                     least = *std::min_element(work.begin(), work.end());
        EXPECT_LE(most - least, 2 * block * (two ? double(targets) / ranks + 1 : block)) << rows << " rows, " << ranks;
      }
}

}  // namespace kmini
