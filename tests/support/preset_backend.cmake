# Configures a throwaway build with a backend preset (`cmake --preset PRESET -B WORK/build`)
# where that backend is missing, and checks that configuration fails with one clear
# line naming Kokkos_ROOT (cmake/KminiBackend.cmake), not with CMake's own errors.
#   -DSOURCE=<kmini source> -DWORK=<scratch dir> -DPRESET=openmp|cuda|hip -DEXPECT=<regex>
#   [-DFAKE_KOKKOS=none|serial|no-wrapper]: Kokkos_ROOT points at a fake install made here
#   (serial: KokkosCore_config.h without CUDA, and bin/nvcc_wrapper; no-wrapper: an empty
#   prefix); without it Kokkos_ROOT and KokkosKernels_ROOT are unset.
cmake_minimum_required(VERSION 3.21)

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(env_args --unset=Kokkos_ROOT --unset=KokkosKernels_ROOT)
if(FAKE_KOKKOS STREQUAL "serial")
  file(WRITE ${WORK}/kokkos/include/KokkosCore_config.h "#define KOKKOS_VERSION 40600\n#define KOKKOS_ENABLE_SERIAL\n")
  file(WRITE ${WORK}/kokkos/bin/nvcc_wrapper "#!/bin/sh\nexit 1\n")
  set(env_args Kokkos_ROOT=${WORK}/kokkos)
elseif(FAKE_KOKKOS STREQUAL "no-wrapper")
  file(MAKE_DIRECTORY ${WORK}/kokkos)
  set(env_args Kokkos_ROOT=${WORK}/kokkos)
endif()

execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env_args}
                        ${CMAKE_COMMAND} --preset ${PRESET} -B ${WORK}/build -DKMINI_ENABLE_TESTS=OFF
                WORKING_DIRECTORY ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr TIMEOUT 240)
message("exit: ${rc}\n--- stdout\n${stdout}--- stderr\n${stderr}---")

if(rc EQUAL 0)
  message(FATAL_ERROR "the ${PRESET} preset configured although its backend is missing")
endif()
# One error, from kmini, on one line that names Kokkos_ROOT.
string(REGEX MATCHALL "CMake Error" errors "${stderr}")
list(LENGTH errors n_errors)
if(NOT n_errors EQUAL 1)
  message(FATAL_ERROR "expected exactly one CMake error (kmini's), got ${n_errors}")
endif()
string(REGEX MATCHALL "[^\n]*kmini: [^\n]*" lines "${stderr}")
list(LENGTH lines n_lines)
if(NOT n_lines EQUAL 1)
  message(FATAL_ERROR "expected one line with 'kmini: ', got ${n_lines}")
endif()
if(NOT lines MATCHES "${EXPECT}" OR NOT lines MATCHES "Kokkos_ROOT")
  message(FATAL_ERROR "the error line does not match '${EXPECT}' or does not name Kokkos_ROOT")
endif()
if(stderr MATCHES "is not a full path|No CMAKE_CXX_COMPILER could be found|CMakeDetermineCXXCompiler")
  message(FATAL_ERROR "CMake's own compiler error came through")
endif()
