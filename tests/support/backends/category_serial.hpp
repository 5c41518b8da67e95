#pragma once
// The serial test category (Cabana/Kokkos scheme): kmini_backend_test (cmake/test_harness/gtest.cmake) compiles
// every backend-generic test body once per enabled backend, after this header.
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY serial
#define TEST_EXECSPACE Kokkos::Serial
#define TEST_MEMSPACE Kokkos::HostSpace
