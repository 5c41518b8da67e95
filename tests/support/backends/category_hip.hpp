#pragma once
// The hip test category (Cabana/Kokkos scheme): kmini_backend_test (cmake/test_harness/gtest.cmake) compiles
// every backend-generic test body once per enabled backend, after this header.
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY hip
#define TEST_EXECSPACE Kokkos::HIP
#define TEST_MEMSPACE Kokkos::HIPSpace
