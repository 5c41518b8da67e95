#include "core/format.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace kmini {

std::string format_g(double v, int precision) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  return buf;
}

std::string format_number(double v, int precision) { return std::isfinite(v) ? format_g(v, precision) : "-"; }

std::string format_si(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  const std::string sep = unit.empty() ? "" : " ";
  if (v == 0) return "0" + sep + unit;
  // Round to 3 significant digits first, so 999.9 becomes 1.00e+03 and takes the next prefix.
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2e", std::fabs(v));
  const int exponent = std::atoi(std::strchr(buf, 'e') + 1);
  const int group = exponent >= 0 ? exponent / 3 : -((2 - exponent) / 3);  // floor(exponent / 3)
  static const char* const prefixes[] = {"p", "n", "u", "m", "", "k", "M", "G", "T", "P", "E"};
  const int index = group + 4;
  if (index < 0 || index > 10) {
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf + sep + unit;
  }
  const double mantissa = std::strtod(buf, nullptr) / std::pow(10.0, 3 * group);
  std::snprintf(buf, sizeof buf, "%s%.*f", v < 0 ? "-" : "", 2 - (exponent - 3 * group), mantissa);
  const std::string suffix = prefixes[index] + unit;
  return buf + (suffix.empty() ? "" : " " + suffix);
}

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) {
    bytes /= 1024;
    ++u;
  }
  char text[64];
  std::snprintf(text, sizeof text, bytes >= 100 || u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
  return text;
}

}  // namespace kmini
