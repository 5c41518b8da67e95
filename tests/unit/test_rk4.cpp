// The RK4 integrator on the tested execution space against the host
// reference (stage by stage, explicit stage sums), closed-form properties
// (convergence order, the invariant) and its own reproducibility.
#include "rk4/rk4.hpp"
#include "rk4/rk4_integrator.hpp"
#include "rk4/rk4_reference.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

namespace kmini::rk4 {

namespace {

using Exec = KMINI_TEST_EXEC_SPACE;  // see test_support.hpp
using C16 = std::complex<double>;

template <class T>
struct Run {
  std::vector<C16> history;
  std::vector<std::complex<T>> F, G;
  std::int64_t first_bad = -1;
};

// A state with an O(1) mean field (so delta = g sum F matters) plus noise;
// G real or complex.
template <class T>
reference::State<T> make_state(std::int64_t count, bool real_g, unsigned seed) {
  reference::State<T> s;
  for (std::int64_t i = 0; i < count; ++i) {
    const double u = random::uniform(seed, 4 * i, -0.5, 0.5), v = random::uniform(seed, 4 * i + 1, -0.5, 0.5);
    const double a = random::uniform(seed, 4 * i + 2, 0, 1), c = random::uniform(seed, 4 * i + 3, -0.3, 0.3);
    s.F.emplace_back(static_cast<T>(0.6 + u), static_cast<T>(0.2 + v));
    s.G.emplace_back(static_cast<T>(a), static_cast<T>(real_g ? 0.0 : c));
  }
  return s;
}

// Copies a host state into the integrator's device fields; returns the host
// mirrors for reading results back.
template <class It, class T>
auto load_state(It& it, const reference::State<T>& s0) {
  auto hF = Kokkos::create_mirror_view(it.F());
  auto hG = Kokkos::create_mirror_view(it.G());
  for (std::size_t i = 0; i < s0.F.size(); ++i) {
    hF(i) = Kokkos::complex<T>(s0.F[i].real(), s0.F[i].imag());
    hG(i) = Kokkos::complex<T>(s0.G[i].real(), s0.G[i].imag());
  }
  Kokkos::deep_copy(it.F(), hF);
  Kokkos::deep_copy(it.G(), hG);
  return std::make_pair(hF, hG);
}

template <class T, class Model = FGModel>
Run<T> run_device(const Problem& p, const reference::State<T>& s0, std::int64_t steps, const Model& model = Model()) {
  Problem q = p;
  q.steps = steps;
  Integrator<T, Exec, Model> it(Exec(), MPI_COMM_SELF, q, static_cast<std::int64_t>(s0.F.size()), model);
  auto [hF, hG] = load_state(it, s0);
  it.start(0, nullptr, false);
  for (std::int64_t k = 0; k < steps; ++k) it.step();
  Run<T> r;
  r.first_bad = it.first_bad_step();
  auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), it.history());
  for (std::size_t k = 0; k < hh.extent(0); ++k) r.history.emplace_back(hh(k).real(), hh(k).imag());
  Kokkos::deep_copy(hF, it.F());
  Kokkos::deep_copy(hG, it.G());
  for (std::size_t i = 0; i < s0.F.size(); ++i) {
    r.F.emplace_back(hF(i).real(), hF(i).imag());
    r.G.emplace_back(hG(i).real(), hG(i).imag());
  }
  return r;
}

template <class T>
std::vector<C16> run_reference(const Problem& p, reference::State<T> s, std::int64_t steps,
                               reference::State<T>* final_state = nullptr) {
  const reference::Setup setup{p.dt, p.g, C16(p.delta0.real(), p.delta0.imag()), p.per_stage, p.kerr};
  const auto allsum = reference::no_mpi_sum;
  auto h = reference::run(s, reference::initial_delta(s, setup, allsum), steps, setup, allsum);
  if (final_state) *final_state = s;
  return h;
}

Problem strong_coupling(std::int64_t n, bool per_stage) {
  Problem p;
  p.n = n;
  p.dt = 0.01;
  p.g = 1.5 / static_cast<double>(n * n);  // |delta| ~ 1
  p.delta0 = Kokkos::complex<double>(0.4, -0.2);
  p.per_stage = per_stage;
  return p;
}

template <class T, class Model = FGModel>
void check_against_reference(bool per_stage, bool real_g, Method method = Method::Auto, const Model& model = Model()) {
  // n = 13: 169 elements, not a multiple of the host chunk, so the tail path runs too.
  Problem p = strong_coupling(13, per_stage);
  p.method = method;
  if constexpr (!Model::kLinear) p.kerr = model.kappa;
  const std::int64_t steps = 60;
  const auto s0 = make_state<T>(p.elements(), real_g, 5);
  const auto dev = run_device<T>(p, s0, steps, model);
  reference::State<T> ref_state;
  const auto ref = run_reference<T>(p, s0, steps, &ref_state);

  // Tolerance: 4 roundings of the field precision per step.
  const double tol = 4.0 * (steps + 1) * std::numeric_limits<T>::epsilon();
  double scale = 0, err = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    scale = std::max(scale, std::abs(ref[k]));
    err = std::max(err, std::abs(dev.history[k] - ref[k]));
  }
  EXPECT_LE(err / scale, tol) << "delta history";
  EXPECT_GT(scale, 0.5);  // the coupling is strong enough to matter
  double ferr = 0;
  for (std::size_t i = 0; i < s0.F.size(); ++i) {
    ferr = std::max(ferr, std::abs(C16(dev.F[i]) - C16(ref_state.F[i])));
    ferr = std::max(ferr, std::abs(C16(dev.G[i]) - C16(ref_state.G[i])));
  }
  EXPECT_LE(ferr, tol) << "fields";
  EXPECT_EQ(dev.first_bad, -1);
}

}  // namespace

TEST(Rk4, PerStageSingleMatchesReference) { check_against_reference<float>(true, false); }
TEST(Rk4, PerStageDoubleMatchesReference) { check_against_reference<double>(true, false); }
TEST(Rk4, PerStepSingleMatchesReference) { check_against_reference<float>(false, true); }
TEST(Rk4, PerStepDoubleMatchesReference) { check_against_reference<double>(false, false); }

TEST(Rk4, ModesDifferAndTheReferenceTellsThemApart) {
  // A wrong coupling mode must fail the comparison above: per_step and
  // per_stage differ far beyond the tolerance on this problem.
  const Problem a = strong_coupling(6, true), b = strong_coupling(6, false);
  const auto s0 = make_state<double>(a.elements(), true, 9);
  const auto ha = run_device<double>(a, s0, 30), hb = run_device<double>(b, s0, 30);
  EXPECT_GT(std::abs(ha.history.back() - hb.history.back()), 1e-6);
}

TEST(Rk4, StageCouplingsFromSumsEqualExplicitStageSums) {
  // The device's linearity shortcut against stage states formed element by element.
  const Problem p = strong_coupling(5, true);
  const auto s = make_state<double>(p.elements(), false, 3);
  Vec5 sums;
  std::vector<Vec5> u;
  for (std::size_t i = 0; i < s.F.size(); ++i) {
    u.push_back({s.F[i].real(), s.F[i].imag(), s.G[i].real(), s.G[i].imag(), 1.0});
    sums.x += u.back().x;
    sums.y += u.back().y;
    sums.a += u.back().a;
    sums.c += u.back().c;
  }
  sums.one = static_cast<double>(u.size());
  Kokkos::complex<double> d[4];
  per_stage_couplings(sums, p.g, p.dt, d);
  // Explicit: stage s state of every element, then its sum.
  const double h[4] = {0, p.dt / 2, p.dt / 2, p.dt};
  std::vector<Vec5> k(u.size());
  for (int st = 0; st < 4; ++st) {
    Vec5 total;
    std::vector<Vec5> stage(u.size());
    for (std::size_t i = 0; i < u.size(); ++i) {
      stage[i] = st == 0 ? u[i] : axpy(u[i], h[st], k[i]);
      total.x += stage[i].x;
      total.y += stage[i].y;
    }
    const Kokkos::complex<double> expect(p.g * total.x, p.g * total.y);
    EXPECT_NEAR(d[st].real(), expect.real(), 1e-14) << "stage " << st;
    EXPECT_NEAR(d[st].imag(), expect.imag(), 1e-14) << "stage " << st;
    for (std::size_t i = 0; i < u.size(); ++i) k[i] = rhs(stage[i], expect);
  }
}

TEST(Rk4, PerStageConvergesAtFourthOrder) {
  Problem p = strong_coupling(3, true);
  const auto s0 = make_state<double>(p.elements(), false, 11);
  const double t_end = 1.0;
  p.dt = t_end / 2560;
  const C16 exact = run_reference<double>(p, s0, 2560).back();
  double err[3];
  for (int i = 0; i < 3; ++i) {
    const std::int64_t steps = 20 << i;
    p.dt = t_end / steps;
    err[i] = std::abs(run_device<double>(p, s0, steps).history.back() - exact);
  }
  for (int i = 0; i < 2; ++i) {
    const double ratio = err[i] / err[i + 1];
    EXPECT_GT(ratio, 13.0) << "dt halving " << i << ": errors " << err[i] << " -> " << err[i + 1];
    EXPECT_LT(ratio, 19.0) << "dt halving " << i;
  }
}

TEST(Rk4, PerStepHasFirstOrderCouplingError) {
  // Against the true coupled solution (fine per_stage), per_step's frozen
  // delta makes the error first order in dt.
  Problem p = strong_coupling(3, true);
  const auto s0 = make_state<double>(p.elements(), true, 13);
  const double t_end = 1.0;
  p.dt = t_end / 2560;
  const C16 exact = run_reference<double>(p, s0, 2560).back();
  Problem q = p;
  q.per_stage = false;
  // per_step's first step uses delta0: start it at the consistent delta(0).
  C16 d0 = 0;
  for (const auto& f : s0.F) d0 += C16(f);
  d0 *= p.g;
  q.delta0 = Kokkos::complex<double>(d0.real(), d0.imag());
  double err[3];
  for (int i = 0; i < 3; ++i) {
    const std::int64_t steps = 40 << i;
    q.dt = t_end / steps;
    err[i] = std::abs(run_device<double>(q, s0, steps).history.back() - exact);
  }
  for (int i = 0; i < 2; ++i) {
    const double ratio = err[i] / err[i + 1];
    EXPECT_GT(ratio, 1.7) << "errors " << err[i] << " -> " << err[i + 1];
    EXPECT_LT(ratio, 2.3) << "errors " << err[i] << " -> " << err[i + 1];
  }
}

template <class T>
double invariant_drift(std::int64_t steps, double dt) {
  Problem p = strong_coupling(16, true);
  p.dt = dt;
  p.steps = steps;
  const auto s0 = make_state<T>(p.elements(), true, 17);
  Integrator<T, Exec> it(Exec(), MPI_COMM_SELF, p, p.elements());
  auto [hF, hG] = load_state(it, s0);
  it.start(0, nullptr, true);
  EXPECT_TRUE(it.tracks_invariant());
  for (std::int64_t k = 0; k < steps; ++k) it.step();
  // G stays real: its imaginary part is copied, never updated.
  Kokkos::deep_copy(hG, it.G());
  for (std::size_t i = 0; i < s0.G.size(); ++i) EXPECT_EQ(hG(i).imag(), T(0));
  return it.invariant_drift();
}

TEST(Rk4, InvariantDriftStaysAtRoundingLevel) {
  // 1000 steps to t = 1 with |delta| ~ 1: RK4's own drift is O(dt^4) = 1e-12.
  EXPECT_LT(invariant_drift<double>(1000, 1e-3), 1e-11);
  EXPECT_LT(invariant_drift<float>(1000, 1e-3), 2e-5);
}

TEST(Rk4, SameInputsGiveBitwiseIdenticalRuns) {
  const Problem p = strong_coupling(9, true);
  const auto s0 = make_state<float>(p.elements(), false, 21);
  const auto a = run_device<float>(p, s0, 25), b = run_device<float>(p, s0, 25);
  ASSERT_EQ(a.history.size(), b.history.size());
  EXPECT_EQ(std::memcmp(a.history.data(), b.history.data(), a.history.size() * sizeof(C16)), 0);
  EXPECT_EQ(std::memcmp(a.F.data(), b.F.data(), a.F.size() * sizeof(a.F[0])), 0);
}

TEST(Rk4, FlagsTheFirstNonFiniteStep) {
  // The original formulation (g = 1, all ones, delta0 = 1) overflows float within a few steps.
  Problem p;
  p.n = 256;
  p.dt = 1e-4;
  p.g = 1;
  p.delta0 = Kokkos::complex<double>(1, 0);
  p.per_stage = false;
  reference::State<float> s0{std::vector<std::complex<float>>(p.elements(), 1.0f),
                             std::vector<std::complex<float>>(p.elements(), 1.0f)};
  const auto r = run_device<float>(p, s0, 40);
  ASSERT_GT(r.first_bad, 0);
  EXPECT_TRUE(std::isfinite(r.history[r.first_bad - 1].real()));
  EXPECT_FALSE(std::isfinite(std::abs(r.history[r.first_bad])));
  for (std::int64_t k = 0; k < r.first_bad; ++k) EXPECT_TRUE(std::isfinite(std::abs(r.history[k]))) << k;
}

TEST(Rk4, BlocksCoverAllRowsOnce) {
  for (int ranks : {1, 2, 3, 4, 7}) {
    std::int64_t next = 0;
    for (int r = 0; r < ranks; ++r) {
      const Block b = block_of(10, r, ranks);
      EXPECT_EQ(b.first, next);
      EXPECT_EQ(b.count % 10, 0);
      next += b.count;
    }
    EXPECT_EQ(next, 100);
  }
}

TEST(Rk4, RandomInitDependsOnlyOnSeedAndGlobalIndex) {
  Kokkos::View<Kokkos::complex<float>*> whole("w", 100), part("p", 30);
  fill_random(Exec(), whole, 4, 1.0, 0);
  fill_random(Exec(), part, 4, 1.0, 50);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole);
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), part);
  for (int i = 0; i < 30; ++i) EXPECT_EQ(hp(i), hw(50 + i));
}

// ---- Models and methods (issue 10) -------------------------------------------

// Stage by stage against the host reference: the F/G model with method
// stages, and the Kerr model (|F| ~ 0.6, kappa = 1.3: the Kerr term is as
// large as the linear ones), both couplings and precisions.
TEST(Rk4Stages, FGModelMatchesReference) {
  check_against_reference<float>(true, false, Method::Stages);
  check_against_reference<double>(true, false, Method::Stages);
  check_against_reference<float>(false, true, Method::Stages);
  check_against_reference<double>(false, false, Method::Stages);
}
TEST(Rk4Stages, KerrPerStageMatchesReference) {
  check_against_reference<float>(true, false, Method::Auto, KerrModel{1.3});
  check_against_reference<double>(true, true, Method::Auto, KerrModel{1.3});
}
TEST(Rk4Stages, KerrPerStepMatchesReference) {
  check_against_reference<float>(false, true, Method::Stages, KerrModel{1.3});
  check_against_reference<double>(false, false, Method::Stages, KerrModel{1.3});
}

namespace {

// max |a - b| / max |b| over the delta history and over the fields (scale >= 1).
struct Agreement {
  double delta = 0, fields = 0;
};
template <class T>
Agreement agreement(const Run<T>& a, const Run<T>& b) {
  Agreement r;
  double scale = 0, fscale = 1;
  for (std::size_t k = 0; k < b.history.size(); ++k) {
    scale = std::max(scale, std::abs(b.history[k]));
    r.delta = std::max(r.delta, std::abs(a.history[k] - b.history[k]));
  }
  for (std::size_t i = 0; i < b.F.size(); ++i) {
    fscale = std::max({fscale, static_cast<double>(std::abs(b.F[i])), static_cast<double>(std::abs(b.G[i]))});
    r.fields = std::max(r.fields, static_cast<double>(std::abs(a.F[i] - b.F[i])));
    r.fields = std::max(r.fields, static_cast<double>(std::abs(a.G[i] - b.G[i])));
  }
  r.delta /= scale;
  r.fields /= fscale;
  return r;
}

}  // namespace

TEST(Rk4Stages, StagesAgreeWithAffineOnTheLinearModel) {
  // Same problem, the two device paths: they differ only in rounding.
  for (const bool per_stage : {false, true}) {
    Problem p = strong_coupling(13, per_stage);
    const auto s0 = make_state<double>(p.elements(), false, 23);
    p.method = Method::Affine;
    const auto affine = run_device<double>(p, s0, 200);
    p.method = Method::Stages;
    const auto stages = run_device<double>(p, s0, 200);
    const Agreement a = agreement(stages, affine);
    EXPECT_LE(a.delta, 1e-12) << (per_stage ? "per_stage" : "per_step");
    EXPECT_LE(a.fields, 1e-12) << (per_stage ? "per_stage" : "per_step");
    EXPECT_GT(std::abs(affine.history.back()), 0.5);
    // Not trivially equal: the two paths round differently.
    EXPECT_NE(std::memcmp(stages.history.data(), affine.history.data(), affine.history.size() * sizeof(C16)), 0);
  }
}

TEST(Rk4Stages, KerrPerStageConvergesAtFourthOrder) {
  Problem p = strong_coupling(3, true);
  p.kerr = 1.5;
  const KerrModel model{p.kerr};
  const auto s0 = make_state<double>(p.elements(), false, 11);
  const double t_end = 1.0;
  p.dt = t_end / 5120;
  const C16 exact = run_reference<double>(p, s0, 5120).back();
  double err[3];
  for (int i = 0; i < 3; ++i) {
    const std::int64_t steps = 20 << i;
    p.dt = t_end / steps;
    err[i] = std::abs(run_device<double>(p, s0, steps, model).history.back() - exact);
  }
  for (int i = 0; i < 2; ++i) {
    const double ratio = err[i] / err[i + 1];
    EXPECT_GT(ratio, 12.0) << "dt halving " << i << ": errors " << err[i] << " -> " << err[i + 1];
    EXPECT_LT(ratio, 20.0) << "dt halving " << i << ": errors " << err[i] << " -> " << err[i + 1];
  }
  // The Kerr term matters: the linear model ends far away.
  p.dt = t_end / 80;
  p.kerr = 0;
  EXPECT_GT(std::abs(run_device<double>(p, s0, 80).history.back() - exact), 1e3 * err[2]);
}

TEST(Rk4Stages, KerrKeepsTheInvariantForRealG) {
  // The Kerr term -i kappa |F|^2 F rotates F: d|F|^2/dt gets 2 Re(conj(F) (-i kappa |F|^2 F)) = 0,
  // so |F|^2 + (G - 1/2)^2 stays conserved; RK4's drift is O(dt^4).
  // Checked as a truncation error: small at t = 1, and 16x smaller when dt halves.
  const auto drift = [](std::int64_t steps) {
    Problem p = strong_coupling(16, true);
    p.dt = 1.0 / static_cast<double>(steps);
    p.steps = steps;
    p.kerr = 2.0;
    const auto s0 = make_state<double>(p.elements(), true, 17);
    Integrator<double, Exec, KerrModel> it(Exec(), MPI_COMM_SELF, p, p.elements(), KerrModel{p.kerr});
    EXPECT_FALSE(it.affine());
    auto [hF, hG] = load_state(it, s0);
    it.start(0, nullptr, true);
    EXPECT_TRUE(it.tracks_invariant());
    for (std::int64_t k = 0; k < p.steps; ++k) it.step();
    Kokkos::deep_copy(hG, it.G());
    for (std::size_t i = 0; i < s0.G.size(); ++i) EXPECT_EQ(hG(i).imag(), 0.0);
    return it.invariant_drift();
  };
  const double coarse = drift(250), fine = drift(500);
  EXPECT_LT(fine, 1e-9);
  EXPECT_GT(coarse / fine, 12.0) << coarse << " -> " << fine;
  EXPECT_LT(coarse / fine, 20.0) << coarse << " -> " << fine;
}

TEST(Rk4Stages, KerrRunsRepeatBitwise) {
  for (const bool per_stage : {false, true}) {
    Problem p = strong_coupling(9, per_stage);
    p.kerr = 0.7;
    const auto s0 = make_state<float>(p.elements(), false, 21);
    const auto a = run_device<float>(p, s0, 25, KerrModel{p.kerr}), b = run_device<float>(p, s0, 25, KerrModel{p.kerr});
    EXPECT_EQ(std::memcmp(a.history.data(), b.history.data(), a.history.size() * sizeof(C16)), 0);
    EXPECT_EQ(std::memcmp(a.F.data(), b.F.data(), a.F.size() * sizeof(a.F[0])), 0);
    EXPECT_EQ(std::memcmp(a.G.data(), b.G.data(), a.G.size() * sizeof(a.G[0])), 0);
  }
}

TEST(Rk4Stages, MethodResolution) {
  EXPECT_TRUE(resolves_to_affine<FGModel>(Method::Auto));
  EXPECT_TRUE(resolves_to_affine<FGModel>(Method::Affine));
  EXPECT_FALSE(resolves_to_affine<FGModel>(Method::Stages));
  EXPECT_FALSE(resolves_to_affine<KerrModel>(Method::Auto));
  EXPECT_FALSE(resolves_to_affine<KerrModel>(Method::Stages));
  EXPECT_THROW(resolves_to_affine<KerrModel>(Method::Affine), std::invalid_argument);
  Problem p;
  EXPECT_FALSE(uses_stages(p));
  p.kerr = 0.1;
  EXPECT_TRUE(uses_stages(p));
  p.kerr = 0;
  p.method = Method::Stages;
  EXPECT_TRUE(uses_stages(p));
}

TEST(Rk4Stages, FlagsTheFirstNonFiniteStep) {
  // The original formulation with method stages: the same step as affine is flagged.
  for (const bool per_stage : {false, true}) {
    Problem p;
    p.n = 256;
    p.dt = 1e-4;
    p.g = 1;
    p.delta0 = Kokkos::complex<double>(1, 0);
    p.per_stage = per_stage;
    reference::State<float> s0{std::vector<std::complex<float>>(p.elements(), 1.0f),
                               std::vector<std::complex<float>>(p.elements(), 1.0f)};
    p.method = Method::Stages;
    const auto r = run_device<float>(p, s0, 40);
    ASSERT_GT(r.first_bad, 0) << per_stage;
    EXPECT_TRUE(std::isfinite(std::abs(r.history[r.first_bad - 1])));
    EXPECT_FALSE(std::isfinite(std::abs(r.history[r.first_bad])));
    p.method = Method::Affine;
    const auto a = run_device<float>(p, s0, 40);
    EXPECT_NEAR(static_cast<double>(r.first_bad), static_cast<double>(a.first_bad), 1.0) << per_stage;
  }
}

}  // namespace kmini::rk4
