#pragma once
// Small things the rk4 .cpp files share: double complex, the deck's real
// range and the number formatting of rk4's messages and plan.
#include "core/format.hpp"

#include <complex>
#include <limits>
#include <string>

namespace kmini::rk4::detail {

using C16 = std::complex<double>;
inline constexpr double kMaxReal = std::numeric_limits<double>::max();

inline std::string fmt(double v, int digits = 6) { return format_g(v, digits); }

inline std::string fmt(const C16& z) { return "(" + fmt(z.real(), 9) + ", " + fmt(z.imag(), 9) + ")"; }

}  // namespace kmini::rk4::detail
