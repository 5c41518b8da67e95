#pragma once
// Helpers shared by kmini's tests.
#include "core/errors.hpp"

#include <gtest/gtest.h>
#include <Kokkos_Core.hpp>

#include <fstream>
#include <string>

namespace kmini::test {

// The execution space the kernel tests run on: the default one, or, in the
// extra per-backend test executables (tests/CMakeLists.txt), another host backend.
#ifndef KMINI_TEST_EXEC_SPACE
#define KMINI_TEST_EXEC_SPACE Kokkos::DefaultExecutionSpace
// This harness tests the default execution space: the app's own (non-template)
// pieces bound to it can be tested here, and only here.
#define KMINI_TEST_DEFAULT_SPACE 1
#endif

// Every execution space this Kokkos enables (Cabana-style per-backend tests):
// kernel tests are TYPED_TESTs over this list.
using EnabledExecSpaces = ::testing::Types<
#if defined(KOKKOS_ENABLE_CUDA)
    Kokkos::Cuda,
#endif
#if defined(KOKKOS_ENABLE_HIP)
    Kokkos::HIP,
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
    Kokkos::OpenMP,
#endif
#if defined(KOKKOS_ENABLE_THREADS)
    Kokkos::Threads,
#endif
#if defined(KOKKOS_ENABLE_SERIAL)
    Kokkos::Serial
#else
    Kokkos::DefaultHostExecutionSpace
#endif
    >;
// Names typed tests after the backend: Stream/Serial.AddIsExact...
struct ExecSpaceName {
  template <class Exec>
  static std::string GetName(int) {
    return Exec::name();
  }
};

// A fresh path under the build tree's test work folder.
inline std::string work_path(const std::string& name) { return std::string(KMINI_TEST_WORK) + "/" + name; }

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
