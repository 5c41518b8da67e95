#pragma once
// Overflow-checked arithmetic on sizes: element counts and byte counts of
// arrays, files and plans. Every size kmini computes from user input (deck
// values, .npy headers) goes through here, so a size that does not fit is a
// clear error instead of a wrapped value that allocates, seeks or loops
// wrongly.
//
// A valid size is a non-negative integer of at most 2^63 - 1 (kMaxSize):
// sizes end up in signed 64-bit places (Kokkos extents, MPI_Offset, off_t,
// std::streamoff), so 2^63 and above count as overflow even though they fit
// in an unsigned 64-bit word.
#include "core/errors.hpp"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace kmini {

inline constexpr std::uint64_t kMaxSize = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

// a * b, or nothing when an operand or the result exceeds kMaxSize.
constexpr std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) noexcept {
  if (a > kMaxSize || b > kMaxSize) return std::nullopt;
  if (a == 0 || b == 0) return std::uint64_t(0);
  if (a > kMaxSize / b) return std::nullopt;
  return a * b;
}

// a + b, or nothing when an operand or the result exceeds kMaxSize.
constexpr std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) noexcept {
  if (a > kMaxSize || b > kMaxSize || a > kMaxSize - b) return std::nullopt;
  return a + b;
}

// The product of all factors; 0 when any factor is 0 (even if the others
// would overflow: an empty array of huge rows is still empty).
// Any range of integers (a .npy shape); negative factors count as overflow.
template <class Range>
constexpr std::optional<std::uint64_t> checked_product(const Range& factors) noexcept {
  for (auto f : factors)
    if (f == 0) return std::uint64_t(0);
  std::uint64_t p = 1;
  for (auto f : factors) {
    const auto next = checked_mul(p, static_cast<std::uint64_t>(f));
    if (!next) return std::nullopt;
    p = *next;
  }
  return p;
}
constexpr std::optional<std::uint64_t> checked_product(std::initializer_list<std::uint64_t> factors) noexcept {
  return checked_product<std::initializer_list<std::uint64_t>>(factors);
}

// Throwing forms for planners: UsageError("<what> is too large (overflows 64-bit byte count)").
[[noreturn]] inline void throw_size_overflow(const std::string& what) {
  throw UsageError(what + " is too large (overflows 64-bit byte count)");
}
inline std::uint64_t product_or_throw(std::initializer_list<std::uint64_t> factors, const std::string& what) {
  const auto p = checked_product(factors);
  if (!p) throw_size_overflow(what);
  return *p;
}

// A byte count for memory plans: exact while it fits (at most kMaxSize), and
// always an approximate value, so a plan that overflows can still say how
// much it would need ("needs 96 EiB").
class ByteCount {
 public:
  constexpr ByteCount() = default;
  constexpr explicit ByteCount(std::uint64_t bytes) noexcept
      : exact_(bytes <= kMaxSize ? bytes : 0), fits_(bytes <= kMaxSize), approx_(static_cast<double>(bytes)) {}
  // `count` items of `bytes_each` bytes.
  static constexpr ByteCount of(std::uint64_t count, std::uint64_t bytes_each) noexcept {
    ByteCount b;
    const auto p = checked_mul(count, bytes_each);
    b.fits_ = p.has_value();
    b.exact_ = p.value_or(0);
    b.approx_ = static_cast<double>(count) * static_cast<double>(bytes_each);
    return b;
  }

  constexpr bool fits() const noexcept { return fits_; }
  constexpr std::uint64_t exact() const noexcept { return exact_; }  // meaningful when fits()
  constexpr double approx() const noexcept { return approx_; }

  constexpr ByteCount& operator+=(const ByteCount& o) noexcept {
    const auto s = checked_add(exact_, o.exact_);
    fits_ = fits_ && o.fits_ && s.has_value();
    exact_ = s.value_or(0);
    approx_ += o.approx_;
    return *this;
  }
  friend constexpr ByteCount operator+(ByteCount a, const ByteCount& b) noexcept { return a += b; }
  // The larger of two plans (phases that do not overlap in time).
  friend constexpr ByteCount max(const ByteCount& a, const ByteCount& b) noexcept {
    if (!a.fits_ || !b.fits_) return (!a.fits_ && (b.fits_ || a.approx_ >= b.approx_)) ? a : b;
    return a.exact_ >= b.exact_ ? a : b;
  }
  // True when this count fits and is at most `limit` bytes.
  constexpr bool within(std::uint64_t limit) const noexcept { return fits_ && exact_ <= limit; }

 private:
  std::uint64_t exact_ = 0;
  bool fits_ = true;
  double approx_ = 0;
};

}  // namespace kmini
