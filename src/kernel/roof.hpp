#pragma once
// The test hook of the measured roofs (the stream bandwidth and gram's
// probes): KMINI_TEST_ROOF_SCALE=x (0 < x) multiplies every roof a run
// measures by x, so a test can force a kernel above 100 % of its roof (and
// see the result marked invalid) without loading the machine. Read only by
// the roof code; a run with it set is marked invalid (results.json).
#include <cstdlib>
#include <string>

namespace kmini {

inline constexpr const char* kRoofScaleVariable = "KMINI_TEST_ROOF_SCALE";

// x where KMINI_TEST_ROOF_SCALE holds a positive number, else 1.
inline double roof_test_scale() {
  const char* v = std::getenv(kRoofScaleVariable);
  if (!v || !*v) return 1.0;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  return (end && *end == '\0' && x > 0) ? x : 1.0;
}

}  // namespace kmini
