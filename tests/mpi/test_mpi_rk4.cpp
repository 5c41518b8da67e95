// The RK4 integrator with rows split over the ranks of MPI_COMM_WORLD (run at
// 1, 2 and 4 ranks): the delta history matches the serial host reference of
// the whole problem within rounding, whatever the rank count, and repeats
// bitwise on the same rank count.
#include "rk4/rk4.hpp"
#include "rk4/rk4_integrator.hpp"
#include "rk4/rk4_reference.hpp"

#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <limits>
#include <vector>

namespace kmini::rk4 {

using Exec = Kokkos::DefaultExecutionSpace;

// (Outside the unnamed namespace: CUDA extended lambdas need an enclosing
// function with external linkage.)
// F random around a non-zero mean (so delta is O(1)), G = 0.3 + random imaginary part.
template <class View>
void init_test_fields(const View& F, const View& G, std::uint64_t first) {
  fill_random(Exec(), F, 31, 0.5, first);
  fill_random(Exec(), G, 32, 0.2, first);
  Kokkos::parallel_for(
      "test::shift", Kokkos::RangePolicy<Exec>(0, F.extent(0)), KOKKOS_LAMBDA(const int i) {
        F(i) += Kokkos::complex<double>(0.7, 0.2);
        G(i) = Kokkos::complex<double>(0.3, G(i).imag());
      });
  Exec().fence();
}

namespace {

using C16 = std::complex<double>;

Problem problem(bool per_stage) {
  Problem p;
  p.n = 11;  // 11 rows over 4 ranks: uneven blocks
  p.dt = 0.01;
  p.steps = 40;
  p.g = 1.0 / 121;
  p.delta0 = Kokkos::complex<double>(0.3, 0.1);
  p.per_stage = per_stage;
  return p;
}

std::vector<C16> run_distributed(const Problem& p) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const Block b = block_of(p.n, rank, size);
  Integrator<double, Exec> it(Exec(), MPI_COMM_WORLD, p, b.count);
  init_test_fields(it.F(), it.G(), static_cast<std::uint64_t>(b.first));
  it.start(0, nullptr, false);
  for (std::int64_t k = 0; k < p.steps; ++k) it.step();
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), it.history());
  std::vector<C16> out;
  for (std::size_t k = 0; k < h.extent(0); ++k) out.emplace_back(h(k).real(), h(k).imag());
  return out;
}

std::vector<C16> run_serial_reference(const Problem& p) {
  Kokkos::View<Kokkos::complex<double>*> F("F", p.elements()), G("G", p.elements());
  init_test_fields(F, G, 0);
  auto hF = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), F);
  auto hG = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), G);
  reference::State<double> s;
  for (std::int64_t i = 0; i < p.elements(); ++i) {
    s.F.emplace_back(hF(i).real(), hF(i).imag());
    s.G.emplace_back(hG(i).real(), hG(i).imag());
  }
  const reference::Setup setup{p.dt, p.g, C16(p.delta0.real(), p.delta0.imag()), p.per_stage};
  return reference::run(s, reference::initial_delta(s, setup, reference::no_mpi_sum), p.steps, setup,
                        reference::no_mpi_sum);
}

void check(bool per_stage) {
  const Problem p = problem(per_stage);
  const auto a = run_distributed(p), b = run_distributed(p);
  const auto ref = run_serial_reference(p);
  ASSERT_EQ(a.size(), ref.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(C16)), 0) << "same rank count, not bitwise equal";
  const double tol = 4.0 * (p.steps + 1) * std::numeric_limits<double>::epsilon();
  double scale = 0, err = 0;
  for (std::size_t k = 0; k < ref.size(); ++k) {
    scale = std::max(scale, std::abs(ref[k]));
    err = std::max(err, std::abs(a[k] - ref[k]));
  }
  EXPECT_GT(scale, 0.5);
  EXPECT_LE(err / scale, tol);
}

}  // namespace

TEST(MpiRk4, PerStageMatchesSerialReferenceAtAnyRankCount) { check(true); }
TEST(MpiRk4, PerStepMatchesSerialReferenceAtAnyRankCount) { check(false); }

}  // namespace kmini::rk4
