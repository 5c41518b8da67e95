// gram's verification (phase "verify"): every rank checks the rows it
// computed of check_rows() against a host reference built from the source
// rows, the row sums against column counts, and the values against a double
// KokkosBlas::gemm of the unpacked matrices.
#include "core/environment.hpp"
#include "core/random.hpp"
#include "core/timer.hpp"
#include "gram/gram.hpp"
#include "gram/impl/gram_detail.hpp"
#include "gram/impl/gram_reference.hpp"
#include "kernel/run_loop.hpp"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

namespace kmini::gram::detail {

namespace {

// The host reference of a source, unpacked 16 MiB of rows at a time: the
// whole unpacked matrix at once took 1 GB beside a 512 MiB plan (10^4 x 10^5).
reference::HostPacked pack_reference(const Source& s) {
  constexpr std::int64_t kUnpackedBlockBytes = 16 << 20;
  reference::HostPacked p{s.rows, words_for(s.cols), {}};
  p.bits.assign(static_cast<std::size_t>(p.rows * p.words), 0);
  const std::int64_t block = std::max<std::int64_t>(1, kUnpackedBlockBytes / std::max<std::int64_t>(1, s.cols));
  for (std::int64_t r0 = 0; r0 < s.rows; r0 += block) {
    const std::int64_t n = std::min(block, s.rows - r0);
    reference::pack_rows(p, host_rows(s, r0, n), r0, n, s.cols);
  }
  return p;
}

}  // namespace

// Rows whose values every rank checks against the references: all of a small
// matrix, else each slice's first and last row and a few spread rows.
std::vector<std::int64_t> check_rows(const Plan& p) {
  std::vector<std::int64_t> rows;
  if (p.rows <= kAllRowsCheckedUpTo) {
    for (std::int64_t i = 0; i < p.rows; ++i) rows.push_back(i);
    return rows;
  }
  for (const auto& s : p.slices) {
    rows.push_back(s.r0);
    rows.push_back(s.r1 - 1);
  }
  for (std::int64_t t = 0; t < kSpreadCheckRows; ++t)
    rows.push_back(static_cast<std::int64_t>(random::hash(99, t) % p.rows));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (rows.size() > kMaxCheckRows) rows.resize(kMaxCheckRows);
  return rows;
}

namespace {

// Row sums: sum_j C(i, j) = sum_k A(i, k) * colcount(k) (of B with two
// inputs), for the checked rows; the rows whose sum differs.
std::int64_t row_sum_mismatches(const Config& c, const reference::HostPacked& ref, const reference::HostPacked& ref_t,
                                std::int64_t targets, const CheckedRows& checked, const Summary& summary) {
  std::vector<std::int64_t> colcount(static_cast<std::size_t>(c.a.cols), 0);
  for (std::int64_t i = 0; i < targets; ++i)
    for (std::int64_t k = 0; k < c.a.cols; ++k)
      colcount[static_cast<std::size_t>(k)] += (ref_t.bits[i * ref_t.words + k / 64] >> (k % 64)) & 1;
  std::int64_t mismatches = 0;
  for (std::int64_t i : checked.rows) {
    std::int64_t expect = 0;
    for (std::int64_t k = 0; k < c.a.cols; ++k)
      if ((ref.bits[i * ref.words + k / 64] >> (k % 64)) & 1) expect += colcount[static_cast<std::size_t>(k)];
    if (summary.row_sums[static_cast<std::size_t>(i)] != expect) ++mismatches;
  }
  return mismatches;
}

// The independent check with KokkosBlas::gemm (double) on the unpacked
// matrices: elements compared and mismatches of this rank's checked rows.
std::pair<std::int64_t, std::int64_t> gemm_check(const Config& c, const Source& t_src, std::int64_t targets,
                                                 const CheckedRows& checked) {
  std::vector<std::int64_t> mine_checked;
  for (const auto& kv : checked.values) mine_checked.push_back(kv.first);
  std::int64_t compared = 0, mismatches = 0;
  if (mine_checked.empty()) return {0, 0};
  std::vector<double> g;
  gemm_panel_double(c.a, t_src, mine_checked, g);
  for (std::size_t t = 0; t < mine_checked.size(); ++t) {
    const std::int64_t i = mine_checked[t], from = checked.from.at(i);
    const auto& values = checked.values.at(i);
    for (std::int64_t j = from; j < targets; ++j) {
      ++compared;
      if (double(values[static_cast<std::size_t>(j - from)]) != g[t * targets + j]) ++mismatches;
    }
  }
  return {compared, mismatches};
}

}  // namespace

void verify(RunContext& ctx, const Config& c, const Plan& plan, const CheckedRows& checked, const Summary& summary,
            KernelReport& report) {
  ScopedRegion verify_region("kmini::gram::verify");
  const Environment& env = ctx.env;
  const std::int64_t rows = plan.rows, targets = plan.targets;
  const bool two = c.two_inputs();
  Json& m = report.metrics;
  FencedTimer<ExecSpace> vt(ctx.exec);
  bool ok = true;
  std::int64_t compared = 0, mismatches = 0;
  Json& v = m["verification"];
  const Source& t_src = two ? c.b : c.a;
  // The host reference on small matrices, else single elements from the source rows.
  const bool small = double(rows + c.b.rows) * double(c.a.cols) <= kHostReferenceLimit;
  reference::HostPacked ref, ref_b;
  if (small) ref = pack_reference(c.a);
  if (small && two) ref_b = pack_reference(c.b);
  const reference::HostPacked& ref_t = two ? ref_b : ref;
  for (const auto& [i, values] : checked.values) {
    const std::int64_t from = checked.from.at(i);
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
  const std::int64_t row_sum_errors = small ? row_sum_mismatches(c, ref, ref_t, targets, checked, summary) : 0;
  std::int64_t gemm_compared = 0, gemm_mismatches = 0;
  if (double(targets) * double(c.a.cols) <= kGemmCheckLimit) {
    std::tie(gemm_compared, gemm_mismatches) = gemm_check(c, t_src, targets, checked);
    v["gemm_check"] = two ? "KokkosBlas::gemm (double) of the checked rows against B^T"
                          : "KokkosBlas::gemm (double) of the checked rows against A^T";
  } else {
    v["gemm_check"] = "skipped (matrix above the gemm check limit)";
  }
  ok = mismatches == 0 && row_sum_errors == 0 && gemm_mismatches == 0;
  v["checked_rows"] = Json(static_cast<long long>(checked.rows.size()));
  v["elements_compared"] = allreduce_sum(env.comm(), double(compared));
  v["mismatches"] = allreduce_sum(env.comm(), double(mismatches));
  v["row_sum_mismatches"] = allreduce_sum(env.comm(), double(row_sum_errors));
  v["gemm_elements_compared"] = allreduce_sum(env.comm(), double(gemm_compared));
  v["gemm_mismatches"] = allreduce_sum(env.comm(), double(gemm_mismatches));
  report.verified = all_ranks_ok(env.comm(), ok);
  v["seconds"] = allreduce_max(env.comm(), vt.seconds());
}

}  // namespace kmini::gram::detail
