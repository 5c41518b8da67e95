#pragma once
// The threads test category (Cabana/Kokkos scheme): kmini_backend_test (cmake/test_harness/gtest.cmake) compiles
// every backend-generic test body once per enabled backend, after this header.
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY threads
#define TEST_EXECSPACE Kokkos::Threads
#define TEST_MEMSPACE Kokkos::HostSpace
