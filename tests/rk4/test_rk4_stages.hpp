// Method stages and the Kerr model on the category's execution
// space: against the host reference and the affine path, fourth-order
// convergence, the invariant, bitwise repeats, method resolution.
#include "rk4/rk4_test_support.hpp"

namespace kmini::rk4 {

// ---- Models and methods -------------------------------------------

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

// ---- G stored as (Re G, Im G) ------------------------------------

namespace {

// A model that changes Im G (neither model does): the F/G model with
// dc/dt = omega, so Im G(t) = c0 + omega t, which RK4 integrates exactly, and
// F sees the moving c through its 2 p c and 2 q c terms. Declares
// kConstantImG = false, so the stage kernels store Im G.
struct MovingImGModel {
  static constexpr bool kLinear = false;
  static constexpr bool kConstantImG = false;
  static constexpr const char* kName = "moving_im_g";
  double omega = 0;
  template <class R>
  KOKKOS_INLINE_FUNCTION Element<R> rhs(const Element<R>& u, const R p, const R q) const {
    Element<R> k = FGModel().rhs(u, p, q);
    k.c = static_cast<R>(omega);
    return k;
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION void coupled(const Element<R>& u, double& re, double& im) const {
    FGModel().coupled(u, re, im);
  }
};

// Method stages, per_step, on the host in double: the stage formulas of
// StageFunctor (stage 0) element by element, delta[k] = g sum F after step k.
template <class Model>
std::vector<C16> host_stages_per_step(const Problem& p, reference::State<double>& s, std::int64_t steps,
                                      const Model& m) {
  std::vector<C16> h{C16(p.delta0.real(), p.delta0.imag())};
  const double half = p.dt / 2, sixth = p.dt / 6;
  for (std::int64_t k = 0; k < steps; ++k) {
    const double dp = h.back().real(), dq = h.back().imag();
    C16 sum = 0;
    for (std::size_t i = 0; i < s.F.size(); ++i) {
      const Element<double> u{s.F[i].real(), s.F[i].imag(), s.G[i].real(), s.G[i].imag()};
      const Element<double> k1 = m.rhs(u, dp, dq), k2 = m.rhs(axpy(u, half, k1), dp, dq);
      const Element<double> k3 = m.rhs(axpy(u, half, k2), dp, dq), k4 = m.rhs(axpy(u, p.dt, k3), dp, dq);
      const Element<double> acc = axpy(axpy(k1, 2.0, k2), 2.0, k3);
      s.F[i] = C16(u.x + sixth * (acc.x + k4.x), u.y + sixth * (acc.y + k4.y));
      s.G[i] = C16(u.a + sixth * (acc.a + k4.a), u.c + sixth * (acc.c + k4.c));
      sum += s.F[i];
    }
    h.push_back(p.g * sum);
  }
  return h;
}

}  // namespace

TEST(TEST_CATEGORY, Rk4Stages_ModelThatChangesImGHasItStored) {
  // n = 13: 169 elements, two chunks of 64 and a tail of 41 on hosts.
  const MovingImGModel model{0.75};
  const std::int64_t steps = 40;
  for (const bool per_stage : {false, true}) {
    Problem p = strong_coupling(13, per_stage);
    const auto s0 = make_state<double>(p.elements(), false, 23);
    const auto r = run_device<double>(p, s0, steps, model);
    ASSERT_EQ(r.first_bad, -1);
    const double t = static_cast<double>(steps) * p.dt;
    for (std::size_t i = 0; i < s0.G.size(); ++i)
      ASSERT_NEAR(r.G[i].imag(), s0.G[i].imag() + model.omega * t, 1e-14) << i << " per_stage " << per_stage;
    // Im G feeds F: the constant-Im-G model ends elsewhere.
    const auto fixed = run_device<double>(p, s0, steps, FGModel());
    EXPECT_GT(std::abs(r.history.back() - fixed.history.back()), 1e-3);
    if (per_stage) continue;
    // per_step against the stage formulas evaluated on the host.
    reference::State<double> host = s0;
    const auto h = host_stages_per_step(p, host, steps, model);
    double scale = 0, err = 0, ferr = 0;
    for (std::size_t k = 0; k < h.size(); ++k) {
      scale = std::max(scale, std::abs(h[k]));
      err = std::max(err, std::abs(r.history[k] - h[k]));
    }
    for (std::size_t i = 0; i < host.F.size(); ++i)
      ferr = std::max({ferr, std::abs(r.F[i] - host.F[i]), std::abs(r.G[i] - host.G[i])});
    EXPECT_LT(err / scale, 1e-12);
    EXPECT_LT(ferr, 1e-12);
  }
}

TEST(TEST_CATEGORY, Rk4Stages_ConstantImGKeepsTheBitsOfTheInterleavedKernels) {
  // Im G is not stored where the model keeps it constant. The interleaved
  // kernels stored it unchanged with method affine and as c + dt/6 * 0 with
  // method stages (-0 became +0); the split ones give the same bits.
  for (const Method method : {Method::Affine, Method::Stages}) {
    for (const std::int64_t steps : {0, 3}) {
      Problem p = strong_coupling(9, true);
      p.method = method;
      auto s0 = make_state<float>(p.elements(), false, 29);
      for (std::size_t i = 0; i < s0.G.size(); i += 3) s0.G[i].imag(-0.0f);
      const auto r = run_device<float>(p, s0, steps);
      const bool plus_zero = method == Method::Stages && steps > 0;
      for (std::size_t i = 0; i < s0.G.size(); ++i) {
        const float c0 = s0.G[i].imag(), c = r.G[i].imag();
        const float expected = (plus_zero && c0 == 0) ? 0.0f : c0;
        EXPECT_EQ(std::signbit(c), std::signbit(expected)) << i;
        EXPECT_EQ(c, expected) << i;
      }
    }
  }
}

}  // namespace kmini::rk4
