// Method stages and the Kerr model (issue 10) on the category's execution
// space: against the host reference and the affine path, fourth-order
// convergence, the invariant, bitwise repeats, method resolution.
#include "unit/kernels/rk4_test_support.hpp"

namespace kmini::rk4 {

// ---- Models and methods (issue 10) -------------------------------------------

// Stage by stage against the host reference: the F/G model with method
// stages, and the Kerr model (|F| ~ 0.6, kappa = 1.3: the Kerr term is as
// large as the linear ones), both couplings and precisions.
TEST(TEST_CATEGORY, Rk4Stages_FGModelMatchesReference) {
  check_against_reference<float>(true, false, Method::Stages);
  check_against_reference<double>(true, false, Method::Stages);
  check_against_reference<float>(false, true, Method::Stages);
  check_against_reference<double>(false, false, Method::Stages);
}
TEST(TEST_CATEGORY, Rk4Stages_KerrPerStageMatchesReference) {
  check_against_reference<float>(true, false, Method::Auto, KerrModel{1.3});
  check_against_reference<double>(true, true, Method::Auto, KerrModel{1.3});
}
TEST(TEST_CATEGORY, Rk4Stages_KerrPerStepMatchesReference) {
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

TEST(TEST_CATEGORY, Rk4Stages_StagesAgreeWithAffineOnTheLinearModel) {
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

TEST(TEST_CATEGORY, Rk4Stages_KerrPerStageConvergesAtFourthOrder) {
  Problem p = strong_coupling(3, true);
  p.kerr = 1.5;
  const KerrModel model{p.kerr};
  const auto s0 = make_state<double>(p.elements(), false, 11);
  const auto err = errors_at_t1(p, s0, 5120, model);
  const C16 exact = [&] {
    Problem q = p;
    q.dt = 1.0 / 5120;
    return run_reference<double>(q, s0, 5120).back();
  }();
  for (int i = 0; i < 2; ++i) {
    const double ratio = err[i] / err[i + 1];
    EXPECT_GT(ratio, 12.0) << "dt halving " << i << ": errors " << err[i] << " -> " << err[i + 1];
    EXPECT_LT(ratio, 20.0) << "dt halving " << i << ": errors " << err[i] << " -> " << err[i + 1];
  }
  // The Kerr term matters: the linear model ends far away.
  p.dt = 1.0 / 80;
  p.kerr = 0;
  EXPECT_GT(std::abs(run_device<double>(p, s0, 80).history.back() - exact), 1e3 * err[2]);
}

TEST(TEST_CATEGORY, Rk4Stages_KerrKeepsTheInvariantForRealG) {
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
    const auto gG = host_G(it);
    for (std::size_t i = 0; i < s0.G.size(); ++i) EXPECT_EQ(gG(i).imag(), 0.0);
    return it.invariant_drift();
  };
  const double coarse = drift(250), fine = drift(500);
  EXPECT_LT(fine, 1e-9);
  EXPECT_GT(coarse / fine, 12.0) << coarse << " -> " << fine;
  EXPECT_LT(coarse / fine, 20.0) << coarse << " -> " << fine;
}

TEST(TEST_CATEGORY, Rk4Stages_KerrRunsRepeatBitwise) {
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

TEST(TEST_CATEGORY, Rk4Stages_MethodResolution) {
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

TEST(TEST_CATEGORY, Rk4Stages_FlagsTheFirstNonFiniteStep) {
  // The original formulation with method stages: the same step as affine is flagged.
  for (const bool per_stage : {false, true}) {
    Problem p = original_formulation(per_stage);
    const reference::State<float> s0 = all_ones(p.elements());
    p.method = Method::Stages;
    const auto r = run_device<float>(p, s0, 40);
    ASSERT_GT(r.first_bad, 0) << per_stage;
    EXPECT_TRUE(std::isfinite(std::abs(r.history[r.first_bad - 1])));
    EXPECT_FALSE(std::isfinite(std::abs(r.history[r.first_bad])));
    p.method = Method::Affine;
    const auto a = run_device<float>(p, s0, 40);
    ASSERT_GT(a.first_bad, 0) << per_stage;
    // per_step: within a step both methods evaluate the same polynomial in
    // the fixed delta, so the overflow comes at the same step. per_stage: the
    // stage couplings are recomputed from sums of fields growing 100-fold per
    // step, and the step of the overflow follows the rounding (stages: step 5
    // built with -march=native, step 10 without; affine: 4 both ways).
    if (!per_stage) {
      EXPECT_NEAR(static_cast<double>(r.first_bad), static_cast<double>(a.first_bad), 1.0);
    }
  }
}

}  // namespace kmini::rk4
