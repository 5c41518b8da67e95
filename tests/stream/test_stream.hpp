// The stream kernels against the host reference, on every enabled execution space.
#include "stream/impl/stream_kernels.hpp"
#include "stream/impl/stream_reference.hpp"
#include "support/test_support.hpp"

#include <cmath>

namespace kmini {

namespace {

using Exec = TEST_EXECSPACE;  // the category (backends/category_*.hpp)
template <class T>
using DeviceView = Kokkos::View<T*, TEST_MEMSPACE>;

template <class T>
void check_add(std::size_t n, std::uint64_t first) {
  const Exec exec;
  DeviceView<T> a("a", n), b("b", n), c("c", n);
  stream::fill(exec, a, 11, first);
  stream::fill(exec, b, 12, first);
  stream::add(exec, a, b, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  const auto r = stream::reference::add<T>(hc, 11, 12, first);
  EXPECT_TRUE(r.ok) << "first bad index " << r.first_bad;
  EXPECT_EQ(r.max_error, 0.0);
}

}  // namespace

TEST(TEST_CATEGORY, Stream_AddIsExactForDoublesAndInts) {
  for (std::size_t n : {1u, 7u, 1000u, 100003u}) {
    check_add<double>(n, 0);
    check_add<std::int32_t>(n, 12345);
  }
}

TEST(TEST_CATEGORY, Stream_ExpIsWithinFourUlp) {
  const Exec exec;
  const std::size_t n = 50001;
  DeviceView<float> a("a", n), c("c", n);
  stream::fill(exec, a, 5, 0);
  stream::exp(exec, a, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  const auto r = stream::reference::exp(hc, 5, 0);
  EXPECT_TRUE(r.ok) << "max relative error " << r.max_error;
  EXPECT_GT(r.max_error, 0.0);  // float rounding is visible: the check compares against double
}

TEST(TEST_CATEGORY, Stream_ReferenceCatchesAWrongResult) {
  const Exec exec;
  const std::size_t n = 100;
  DeviceView<double> a("a", n), b("b", n), c("c", n);
  stream::fill(exec, a, 1, 0);
  stream::fill(exec, b, 2, 0);
  stream::add(exec, a, b, c);
  auto hc = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), c);
  hc(42) = std::nextafter(hc(42), 10.0);  // one ulp off
  const auto r = stream::reference::add<double>(hc, 1, 2, 0);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad, 42u);
}

TEST(TEST_CATEGORY, Stream_InputsDependOnlyOnSeedAndGlobalIndex) {
  // Rank-count independence: a slice generated at an offset equals the same
  // slice of the whole array.
  const Exec exec;
  DeviceView<double> whole("w", 64), part("p", 16);
  stream::fill(exec, whole, 9, 0);
  stream::fill(exec, part, 9, 40);
  auto hw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), whole);
  auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), part);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(hp(i), hw(40 + i));
}

}  // namespace kmini
