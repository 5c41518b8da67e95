#pragma once
// The openmp test category (Cabana/Kokkos scheme): kmini_backend_test (cmake/test_harness/gtest.cmake) compiles
// every backend-generic test body once per enabled backend, after this header.
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY openmp
#define TEST_EXECSPACE Kokkos::OpenMP
#define TEST_MEMSPACE Kokkos::HostSpace
