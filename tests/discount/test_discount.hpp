// The discount kernels against the host reference (bitwise), an independent
// error bound for the sums, and the deck validation.
#include "deck/deck.hpp"
#include "discount/discount.hpp"
#include "discount/impl/discount_kernels.hpp"
#include "discount/impl/discount_reference.hpp"
#include "support/test_support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

namespace kmini {
namespace {

using Exec = TEST_EXECSPACE;  // the category (backends/category_*.hpp)
using discount::Reduce;

// Device inputs for one (D, M, O) shape, random in [0, 1).
template <class T>
struct Problem {
  std::int64_t D, M, O;
  Kokkos::View<T**, Kokkos::LayoutRight> mult;
  Kokkos::View<T***, Kokkos::LayoutRight> disc;
  Problem(std::int64_t d, std::int64_t m, std::int64_t o)
      : D(d), M(m), O(o), mult("mult", m, o), disc("disc", d, m, o) {
    discount::fill_random<T>(Exec(), discount::as_row(mult), 3, 0);
    discount::fill_random<T>(Exec(), discount::Row<T>(disc.data(), disc.span()), 4, 0);
  }
};

template <class T, class V>
auto host(const V& v) {
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
}

template <class T>
void check_shape(std::int64_t D, std::int64_t M, std::int64_t O) {
  SCOPED_TRACE(testing::Message() << "D=" << D << " M=" << M << " O=" << O << " T=" << sizeof(T));
  Problem<T> p(D, M, O);
  const std::int64_t row = M * O;
  const auto hm = host<T>(p.mult);
  const auto hd = host<T>(p.disc);
  const auto mult = discount::as_row(p.mult);
  const auto disc = discount::as_rows(p.disc);

  // Plain multiply, both launch policies, and the streaming stores (host
  // builds with them; elsewhere the mdrange kernel again): rows of any
  // length, so each date's row starts off a vector boundary.
  for (int policy = 0; policy < 3; ++policy) {
    Kokkos::View<T***, Kokkos::LayoutRight> cv("cv", D, M, O);
    Kokkos::deep_copy(cv, T(-1));
    if (policy == 0) discount::multiply_mdrange(Exec(), mult, disc, discount::as_rows(cv));
    else if (policy == 1) discount::multiply_flat(Exec(), mult, disc, discount::as_rows(cv));
    else discount::multiply_streaming(Exec(), mult, disc, discount::as_rows(cv));
    Exec().fence();
    const auto hc = host<T>(cv);
    EXPECT_EQ(discount::reference::first_cv_difference(hm.data(), hd.data(), hc.data(), D, row), -1)
        << "policy " << policy;
  }

  // Fused per-date sums, with and without cv.
  const std::int64_t blocks = (row + discount::kBlock - 1) / discount::kBlock;
  const auto ref_date = discount::reference::per_date(hm.data(), hd.data(), D, row);
  for (bool write_cv : {true, false}) {
    Kokkos::View<T***, Kokkos::LayoutRight> cv("cv", write_cv ? D : 0, write_cv ? M : 0, write_cv ? O : 0);
    Kokkos::View<T**, Kokkos::LayoutRight> partial("partial", D, blocks);
    Kokkos::View<T*> sums("sums", D);
    const discount::Rows<T> cv_rows(cv.data(), cv.extent(0), cv.extent(1) * cv.extent(2));
    if (write_cv) discount::reduce_per_date<true>(Exec(), mult, disc, cv_rows, partial, sums);
    else discount::reduce_per_date<false>(Exec(), mult, disc, cv_rows, partial, sums);
    const auto hs = host<T>(sums);
    EXPECT_EQ(discount::reference::first_difference<T>(ref_date.data(), hs.data(), D), -1) << "cv " << write_cv;
    if (write_cv) {
      EXPECT_EQ(discount::reference::first_cv_difference(hm.data(), hd.data(), host<T>(cv).data(), D, row), -1);
    }
  }

  // Fused per-id sums, with and without cv.
  const auto ref_id = discount::reference::per_id(hm.data(), hd.data(), D, M, O);
  for (bool write_cv : {true, false}) {
    Kokkos::View<T***, Kokkos::LayoutRight> cv("cv", write_cv ? D : 0, write_cv ? M : 0, write_cv ? O : 0);
    Kokkos::View<T*> sums("sums", M);
    if (write_cv) discount::reduce_per_id<true>(Exec(), p.mult, p.disc, cv, sums);
    else discount::reduce_per_id<false>(Exec(), p.mult, p.disc, cv, sums);
    const auto hs = host<T>(sums);
    EXPECT_EQ(discount::reference::first_difference<T>(ref_id.data(), hs.data(), M), -1) << "cv " << write_cv;
    if (write_cv) {
      EXPECT_EQ(discount::reference::first_cv_difference(hm.data(), hd.data(), host<T>(cv).data(), D, row), -1);
    }
  }
}

// Unit extents, odd sizes, rows shorter/longer than a block and not a
// multiple of the lane count, the original example's row.
const std::tuple<int, int, int> kShapes[] = {
    {1, 1, 1},   {1, 7, 1},    {3, 1, 5},    {1, 1, 1031}, {5, 3, 4},    {7, 13, 3},
    {2, 205, 5}, {4, 1, 2049}, {17, 257, 1}, {3, 4000, 5}, {2, 1, 70001}};  // last: two streaming blocks per row

TEST(TEST_CATEGORY, Discount_MatchesReferenceBitwiseDouble) {
  for (const auto& s : kShapes) check_shape<double>(std::get<0>(s), std::get<1>(s), std::get<2>(s));
}

TEST(TEST_CATEGORY, Discount_MatchesReferenceBitwiseSingle) {
  for (const auto& s : kShapes) check_shape<float>(std::get<0>(s), std::get<1>(s), std::get<2>(s));
}

// The reference itself against an independent long double sum: the fixed
// order's error stays within the classical bound n * eps * sum|x|.
template <class T>
void check_sum_accuracy(std::int64_t D, std::int64_t M, std::int64_t O) {
  Problem<T> p(D, M, O);
  const auto hm = host<T>(p.mult);
  const auto hd = host<T>(p.disc);
  const std::int64_t row = M * O;
  const auto by_date = discount::reference::per_date(hm.data(), hd.data(), D, row);
  const auto by_id = discount::reference::per_id(hm.data(), hd.data(), D, M, O);
  const long double eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t d = 0; d < D; ++d) {
    long double exact = 0, abs_sum = 0;
    for (std::int64_t r = 0; r < row; ++r) {
      const long double x = static_cast<long double>(hm(r / O, r % O)) * hd(d, r / O, r % O);
      exact += x;
      abs_sum += std::fabs(x);
    }
    EXPECT_LE(std::fabs(static_cast<long double>(by_date[d]) - exact), row * eps * abs_sum) << "date " << d;
  }
  for (std::int64_t i = 0; i < M; ++i) {
    long double exact = 0;
    for (std::int64_t d = 0; d < D; ++d)
      for (std::int64_t n = 0; n < O; ++n) exact += static_cast<long double>(hm(i, n)) * hd(d, i, n);
    EXPECT_LE(std::fabs(static_cast<long double>(by_id[i]) - exact), D * O * eps * exact) << "id " << i;
  }
}

TEST(TEST_CATEGORY, Discount_SumsAreAccurate) {
  check_sum_accuracy<double>(3, 1000, 5);
  check_sum_accuracy<float>(3, 1000, 5);
}

TEST(TEST_CATEGORY, Discount_ReferenceCatchesAOneUlpError) {
  Problem<double> p(3, 11, 5);
  Kokkos::View<double***, Kokkos::LayoutRight> cv("cv", 3, 11, 5);
  discount::multiply_mdrange(Exec(), discount::as_row(p.mult), discount::as_rows(p.disc), discount::as_rows(cv));
  auto hc = host<double>(cv);
  hc(2, 7, 3) = std::nextafter(hc(2, 7, 3), 10.0);
  EXPECT_EQ(discount::reference::first_cv_difference(host<double>(p.mult).data(), host<double>(p.disc).data(),
                                                     hc.data(), 3, 55),
            2 * 55 + 7 * 5 + 3);
}

TEST(TEST_CATEGORY, Discount_InputsDependOnlyOnGlobalIndex) {
  // A rank's slice of dates equals the same dates of the whole array.
  Kokkos::View<double*> whole("w", 60), part("p", 24);
  discount::fill_random<double>(Exec(), whole, 9, 0);
  discount::fill_random<double>(Exec(), part, 9, 36);
  const auto hw = host<double>(whole);
  const auto hp = host<double>(part);
  for (int k = 0; k < 24; ++k) EXPECT_EQ(hp(k), hw(36 + k));
  Kokkos::View<float*> ar("a", 5);
  discount::fill_arange<float>(Exec(), ar, 7);
  const auto ha = host<float>(ar);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(ha(k), 7.0f + k);
}

}  // namespace
}  // namespace kmini
