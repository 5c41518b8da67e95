#include "io/json.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace kmini {

TEST(Json, DumpsInInsertionOrderWithEscapes) {
  Json j;
  j["b"] = 1;
  j["a"] = "x\"y\n";
  j["c"] = Json::array_of(std::vector<double>{0.1, 2.0});
  j["d"] = Json();
  EXPECT_EQ(j.dump(0), "{\"b\":1,\"a\":\"x\\\"y\\n\",\"c\":[0.1, 2.0],\"d\":null}");
}

TEST(Json, RealsRoundTripAndNonFiniteBecomesNull) {
  Json j = Json::array();
  j.push_back(1.0 / 3.0);
  j.push_back(std::nan(""));
  j.push_back(1e300);
  EXPECT_EQ(j.dump(0), "[0.3333333333333333, null, 1e+300]");
}

}  // namespace kmini
