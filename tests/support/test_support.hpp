#pragma once
// Helpers shared by kmini's tests.
#include "core/errors.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <fstream>
#include <string>
#include "support/relocated_path.hpp"

namespace kmini::test {

// A fresh path under the build tree's test work folder.
inline std::string work_path(const std::string& name) { return kmini::test::relocated(KMINI_TEST_WORK) + "/" + name; }

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Expects `statement` to throw E whose message contains `needle`.
#define KMINI_EXPECT_THROW_MSG(statement, E, needle)                                \
  do {                                                                              \
    try {                                                                           \
      statement;                                                                    \
      ADD_FAILURE() << "expected " #E " containing: " << (needle);                  \
    } catch (const E& e) {                                                          \
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what(); \
    }                                                                               \
  } while (0)

}  // namespace kmini::test
