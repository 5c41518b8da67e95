// rk4 checkpoints (format 2): the checksum over every stored value, its
// split-independence (each rank digests a share), and what a restart refuses:
// damaged files, header values out of range, sums that do not match the
// fields, format version 1 -- each one UsageError naming the file.
#include "core/errors.hpp"
#include "core/random.hpp"
#include "io/npy.hpp"
#include "rk4/rk4_checkpoint.hpp"
#include "support/test_support.hpp"
#include "version.hpp"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <vector>

namespace kmini::rk4 {

namespace {

using C16 = std::complex<double>;
namespace ck = checkpoint;

// A small consistent checkpoint: n = 3, step 4, single-precision values
// (as the integrator stores them), sums of the fields.
struct Sample {
  CheckpointHeader h;
  std::vector<C16> history, rows;
};

Sample make_sample() {
  Sample s;
  s.h.n = 3;
  s.h.step = 4;
  s.h.field_bytes = 8;
  s.h.per_stage = true;
  s.h.dt = 0.01;
  s.h.g = 1.0 / 9;
  for (int k = 0; k <= s.h.step; ++k) s.history.emplace_back(0.5 + 0.01 * k, -0.25 * k);
  for (int i = 0; i < 9; ++i) {
    const auto f = [&](int j) { return static_cast<double>(static_cast<float>(random::uniform(7, 4 * i + j, -1, 1))); };
    s.rows.emplace_back(f(0), f(1));
    s.rows.emplace_back(f(2), f(3));
    s.h.sums.fx += f(0);
    s.h.sums.fy += f(1);
    s.h.sums.ga += f(2);
    s.h.sum_im_g += f(3);
  }
  return s;
}

std::string write_sample(const std::string& name, const Sample& s = make_sample()) {
  const std::string path = test::work_path(name);
  write_checkpoint(MPI_COMM_SELF, path, s.h, s.history, 0, s.rows);
  return path;
}

// The stored doubles of a checkpoint, in file order.
std::vector<double> load_doubles(const std::string& path) {
  const auto z = npy::read_all<C16>(npy::read_info(path));
  std::vector<double> v(2 * z.size());
  std::memcpy(v.data(), z.data(), v.size() * sizeof(double));
  return v;
}

void save_doubles(const std::string& path, const std::vector<double>& v) {
  npy::write(path, npy::DType::C16, {static_cast<std::int64_t>(v.size() / 4), 2}, v.data());
}

std::uint64_t stored_checksum(const std::vector<double>& v) {
  std::uint64_t c = 0;
  EXPECT_TRUE(ck::decode_checksum(v[ck::kChecksumSlot], v[ck::kChecksumSlot + 1], c));
  return c;
}

void flip_low_bit(double& x) {
  std::uint64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  b ^= 1;
  std::memcpy(&x, &b, sizeof b);
}

// Stored double indices (row r, column c, part p at 4 r + 2 c + p).
constexpr std::size_t kMethod = 10, kKerr = 11;  // row 2, column 1: (method, kappa)
constexpr std::size_t kFlag = 9, kDt = 12, kSumReF = 16, kSumImG = 21, kDelta2 = 4 * (6 + 2);
constexpr std::size_t kF0 = 4 * (6 + 4 + 1);  // Re F of element 0

}  // namespace

TEST(Rk4Checkpoint, ChecksumRoundTripsThroughTwoExactDoubles) {
  for (const std::uint64_t c : {std::uint64_t(0), std::uint64_t(1), std::uint64_t(0xffffffffffffffffull),
                                std::uint64_t(0x8000000000000001ull), std::uint64_t(0x136c46414afb00beull)}) {
    double hi = 0, lo = 0;
    ck::encode_checksum(c, hi, lo);
    std::uint64_t back = 0;
    ASSERT_TRUE(ck::decode_checksum(hi, lo, back));
    EXPECT_EQ(back, c);
  }
  std::uint64_t c = 0;
  EXPECT_FALSE(ck::decode_checksum(0.5, 0, c));
  EXPECT_FALSE(ck::decode_checksum(0, -1, c));
  EXPECT_FALSE(ck::decode_checksum(4294967296.0, 0, c));
  EXPECT_FALSE(ck::decode_checksum(std::nan(""), 0, c));
}

// Pins the format: this value was computed from the written file by an
// independent numpy implementation of the README's recipe.
TEST(Rk4Checkpoint, WrittenChecksumMatchesTheDocumentedDefinition) {
  const auto v = load_doubles(write_sample("ckpt_pinned.npy"));
  EXPECT_EQ(stored_checksum(v), ck::checksum_share(0, v.data(), v.size()));
  EXPECT_EQ(stored_checksum(v), 0xe3fd464a05ba6d08ull) << std::hex << stored_checksum(v);
}

TEST(Rk4Checkpoint, ChangingAnySingleStoredValueChangesTheChecksum) {
  const auto v = load_doubles(write_sample("ckpt_every_value.npy"));
  const std::uint64_t good = ck::checksum_share(0, v.data(), v.size());
  // The named damage cases, then every stored double: last bit flipped,
  // replaced by NaN, and (for zeros) by -0.0.
  for (const std::size_t i : {kSumReF, kSumImG, kF0, kF0 + 3, kDelta2, kFlag, kDt}) {
    auto w = v;
    flip_low_bit(w[i]);
    EXPECT_NE(ck::checksum_share(0, w.data(), w.size()), good) << "double " << i;
  }
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i == ck::kChecksumSlot || i == ck::kChecksumSlot + 1) continue;
    auto w = v;
    flip_low_bit(w[i]);
    EXPECT_NE(ck::checksum_share(0, w.data(), w.size()), good) << "double " << i << " low bit";
    for (const double x : {std::nan(""), v[i] != 0 ? 0.0 : std::signbit(v[i]) ? 0.0 : -0.0}) {
      w[i] = x;
      EXPECT_NE(ck::checksum_share(0, w.data(), w.size()), good) << "double " << i << " = " << x;
    }
  }
  // Two values swapped: the position matters.
  auto w = v;
  std::swap(w[kF0], w[kF0 + 1]);
  EXPECT_NE(ck::checksum_share(0, w.data(), w.size()), good);
}

TEST(Rk4Checkpoint, DigestIsTheSameForAnySplitIntoShares) {
  const std::string path = write_sample("ckpt_split.npy");
  const auto z = npy::read_all<C16>(npy::read_info(path));
  const std::int64_t header_rows = 6 + 4 + 1;
  const ck::Digest whole = ck::digest_share(header_rows, 0, z.data(), z.size());
  EXPECT_EQ(whole.checksum, ck::checksum_share(0, reinterpret_cast<const double*>(z.data()), 2 * z.size()));
  EXPECT_TRUE(std::isinf(whole.first_bad_delta));
  const Sample s = make_sample();
  EXPECT_NEAR(whole.sums[0], s.h.sums.fx, 1e-15);
  EXPECT_NEAR(whole.sums[3], s.h.sum_im_g, 1e-15);
  for (const int parts : {2, 3, 4, 7, static_cast<int>(z.size())}) {
    ck::Digest combined;
    // Shares of uneven sizes, combined last to first (order must not matter).
    std::vector<std::uint64_t> cuts{0};
    for (int p = 1; p < parts; ++p) cuts.push_back(z.size() * p * p / (parts * parts));
    cuts.push_back(z.size());
    for (int p = parts - 1; p >= 0; --p)
      ck::combine(combined, ck::digest_share(header_rows, cuts[p], z.data() + cuts[p], cuts[p + 1] - cuts[p]));
    EXPECT_EQ(combined.checksum, whole.checksum) << parts << " shares";
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(combined.sums[i], whole.sums[i], 1e-14) << parts << " shares";
  }
}

TEST(Rk4Checkpoint, OpensAWrittenCheckpoint) {
  const Sample s = make_sample();
  const CheckpointHeader h = open_checkpoint(MPI_COMM_SELF, write_sample("ckpt_good.npy", s));
  EXPECT_EQ(h.n, 3);
  EXPECT_EQ(h.step, 4);
  EXPECT_EQ(h.field_bytes, 8);
  EXPECT_TRUE(h.per_stage);
  EXPECT_EQ(h.dt, s.h.dt);
  EXPECT_EQ(h.g, s.h.g);
  EXPECT_EQ(h.sums.fx, s.h.sums.fx);
  EXPECT_EQ(h.sum_im_g, s.h.sum_im_g);
}

// Writes the sample with `edit` applied (and the checksum recomputed when
// `reseal`), and expects open_checkpoint to refuse it with `needle`.
template <class Edit>
void expect_refused(const std::string& name, Edit edit, bool reseal, const std::string& needle,
                    const std::string& also = "") {
  const std::string path = test::work_path(name);
  auto v = load_doubles(write_sample(name + ".orig.npy"));
  edit(v);
  if (reseal) ck::reseal(v);
  save_doubles(path, v);
  KMINI_EXPECT_THROW_MSG(open_checkpoint(MPI_COMM_SELF, path), UsageError, path + ": " + needle);
  if (!also.empty()) KMINI_EXPECT_THROW_MSG(open_checkpoint(MPI_COMM_SELF, path), UsageError, also);
}

TEST(Rk4Checkpoint, RecordsMethodAndKerr) {
  // Method affine and kappa 0 are stored as zeros: what format-2 files written
  // before these fields existed hold there (and what those runs did).
  const auto v0 = load_doubles(write_sample("ckpt_affine.npy"));
  EXPECT_EQ(v0[kMethod], 0.0);
  EXPECT_EQ(v0[kKerr], 0.0);
  const CheckpointHeader h0 = open_checkpoint(MPI_COMM_SELF, test::work_path("ckpt_affine.npy"));
  EXPECT_FALSE(h0.stages);
  EXPECT_EQ(h0.kerr, 0.0);
  Sample s = make_sample();
  s.h.stages = true;
  s.h.kerr = -0.75;
  const auto v = load_doubles(write_sample("ckpt_stages.npy", s));
  EXPECT_EQ(v[kMethod], 1.0);
  EXPECT_EQ(v[kKerr], -0.75);
  const CheckpointHeader h = open_checkpoint(MPI_COMM_SELF, test::work_path("ckpt_stages.npy"));
  EXPECT_TRUE(h.stages);
  EXPECT_EQ(h.kerr, -0.75);
  const std::string c = "checkpoint is corrupt: ";
  expect_refused(
      "ckpt_method_damaged.npy", [](auto& v) { v[kMethod] = 1; }, false, c + "checksum mismatch (stored 0x");
  expect_refused(
      "ckpt_kerr_damaged.npy", [](auto& v) { v[kKerr] = 0.5; }, false, c + "checksum mismatch (stored 0x");
  expect_refused(
      "ckpt_method2.npy", [](auto& v) { v[kMethod] = 2; }, true, c + "method flag is 2, expected 0 or 1");
  expect_refused(
      "ckpt_kerr_nan.npy", [](auto& v) { v[kKerr] = std::nan(""); }, true, c + "stored kerr is not finite (nan)");
}

TEST(Rk4Checkpoint, RefusesDamagedFiles) {
  const std::string mismatch = "checkpoint is corrupt: checksum mismatch (stored 0x";
  expect_refused(
      "ckpt_sum_bit.npy", [](auto& v) { flip_low_bit(v[kSumReF]); }, false, mismatch);
  expect_refused(
      "ckpt_field.npy", [](auto& v) { v[kF0 + 2] = 0.125; }, false, mismatch);
  expect_refused(
      "ckpt_history.npy", [](auto& v) { v[kDelta2 + 1] += 1e-9; }, false, mismatch);
  expect_refused(
      "ckpt_flag.npy", [](auto& v) { v[kFlag] = 2; }, false, mismatch);
  expect_refused(
      "ckpt_nan_sum.npy", [](auto& v) { v[kSumImG] = std::nan(""); }, false, mismatch);
  expect_refused(
      "ckpt_slot.npy", [](auto& v) { v[ck::kChecksumSlot] += 0.5; }, false,
      "checkpoint is corrupt: checksum mismatch (stored (", ".5, ");
  expect_refused(
      "ckpt_slot.npy", [](auto& v) { v[ck::kChecksumSlot] += 0.5; }, false,
      "checkpoint is corrupt: checksum mismatch (stored (", ") is not a checksum, computed 0x");
}

TEST(Rk4Checkpoint, RefusesBadHeaderValuesBehindAValidChecksum) {
  const std::string c = "checkpoint is corrupt: ";
  expect_refused(
      "ckpt_flag2.npy", [](auto& v) { v[kFlag] = 2; }, true, c + "coupling flag is 2, expected 0 or 1");
  expect_refused(
      "ckpt_flag_half.npy", [](auto& v) { v[kFlag] = 0.5; }, true, c + "coupling flag is 0.5");
  expect_refused(
      "ckpt_precision.npy", [](auto& v) { v[kFlag - 1] = 4; }, true, c + "precision field is 4, expected 8 or 16");
  expect_refused(
      "ckpt_nan_dt.npy", [](auto& v) { v[kDt] = std::nan(""); }, true, c + "stored dt is not finite (nan)");
  expect_refused(
      "ckpt_inf_g.npy", [](auto& v) { v[kDt + 1] = -INFINITY; }, true, c + "stored g is not finite (-inf)");
  expect_refused(
      "ckpt_nan_sum2.npy", [](auto& v) { v[kSumImG] = std::nan(""); }, true, c + "stored sum Im G is not finite (nan)");
  expect_refused(
      "ckpt_nan_delta.npy", [](auto& v) { v[kDelta2] = std::nan(""); }, true, c + "stored delta[2] is not finite");
}

TEST(Rk4Checkpoint, RefusesSumsThatDoNotMatchTheFields) {
  const std::string c = "checkpoint is corrupt: stored sum ";
  expect_refused(
      "ckpt_sum_off.npy", [](auto& v) { v[kSumReF] += 1e-9; }, true, c + "Re F = ");
  expect_refused(
      "ckpt_field_off.npy", [](auto& v) { v[kF0 + 4 + 3] -= 1e-6; }, true,  // Im G of element 1
      c + "Im G = ");
  expect_refused(
      "ckpt_field_nan.npy", [](auto& v) { v[kF0 + 1] = std::nan(""); }, true, c + "Im F = ");
  // Within rounding of a different summation order: accepted.
  const std::string path = test::work_path("ckpt_sum_ulp.npy");
  auto v = load_doubles(write_sample("ckpt_sum_ulp.orig.npy"));
  flip_low_bit(v[kSumReF]);
  ck::reseal(v);
  save_doubles(path, v);
  EXPECT_NO_THROW(open_checkpoint(MPI_COMM_SELF, path));
}

TEST(Rk4Checkpoint, RefusesOtherVersionsAndLayouts) {
  expect_refused(
      "ckpt_v1.npy",
      [](auto& v) {
        v[1] = 1;
        v[2] = v[3] = 0;
      },
      false,
      "checkpoint format version 1 has no integrity check (written by kmini < " + std::string(kVersion) +
          "); restart from the start or from a checkpoint written by this kmini");
  expect_refused(
      "ckpt_v3.npy", [](auto& v) { v[1] = 3; }, false,
      "checkpoint format version 3 is not supported (this kmini reads version 2)");
  expect_refused(
      "ckpt_magic.npy", [](auto& v) { v[0] = 1; }, false, "not an rk4 checkpoint (wrong magic number)");
  expect_refused(
      "ckpt_n.npy", [](auto& v) { v[4] = 4; }, false,
      "checkpoint is corrupt: shape (20, 2) does not match n = 4 and step = 4 in its header "
      "(expected (27, 2))");
  expect_refused(
      "ckpt_step.npy", [](auto& v) { v[5] = 4.5; }, false,
      "checkpoint is corrupt: n = 3 and step = 4.5 in its header are not valid counts");
}

}  // namespace kmini::rk4
