# kmini's test harness: every helper the folders of tests/ call, the test programs the
# kernels share, and the tiers. tests/CMakeLists.txt is
#   include(KminiTestHarness)
#   kmini_tests_begin()        # paths, MPI launcher, pythons; the shared test programs
#   add_subdirectory(<folder>) # one per folder; each folder's CMakeLists.txt ends with kmini_test_tiers()
#   kmini_tests_end()          # checks that every folder labelled its tiers; labels those of tests/ itself
# The helpers, by file:
#   test_harness/gtest.cmake    kmini_unit_test, kmini_backend_test, kmini_mpi_unit_test,
#                               kmini_micro_kernel_tests (GoogleTest programs and their discovery)
#   test_harness/cli.cmake      kmini_cli_test, kmini_usage_test, kmini_compare_outputs, kmini_compare_pairs
#   test_harness/scripts.cmake  kmini_test, kmini_skip_test, kmini_python_test, kmini_python_mpi_test,
#                               kmini_preset_test, kmini_fault_test, kmini_fault_binary_test
# Every test runs in the build's tests/ folder (KMINI_TEST_BINARY_ROOT), whichever folder
# defines it, and writes under KMINI_TEST_WORK.
include(GoogleTest)
include(KminiFindPython)

# Test properties every helper that registers one test takes as keywords, each followed by
# its value(s): kmini_test(NAME COMMAND ... LABELS cli mpi PROCESSORS 2 TIMEOUT 300).
set(KMINI_TEST_PROPERTY_KEYS ENVIRONMENT LABELS PROCESSORS TIMEOUT SKIP_RETURN_CODE FIXTURES_SETUP
    FIXTURES_REQUIRED DEPENDS PASS_REGULAR_EXPRESSION FAIL_REGULAR_EXPRESSION RUN_SERIAL)

# _kmini_test_properties(NAME PREFIX): sets each property given as PREFIX_<KEY> (from
# cmake_parse_arguments with KMINI_TEST_PROPERTY_KEYS among the multi-value keywords).
function(_kmini_test_properties name prefix)
  foreach(key IN LISTS KMINI_TEST_PROPERTY_KEYS)
    if(DEFINED ${prefix}_${key})
      set_tests_properties(${name} PROPERTIES ${key} "${${prefix}_${key}}")
    endif()
  endforeach()
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/test_harness/gtest.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/test_harness/cli.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/test_harness/scripts.cmake)

# --- the tiers -------------------------------------------------------------------------
# The quick tier (ctest -L quick; CONTRIBUTING.md says how long it takes): every kernel's
# unit tests (labelled when they are discovered: gtest.cmake), the default deck (every
# kernel) from the CLI and at 2 ranks, the Python module's tests. The whole suite stays what
# scripts/test.sh runs.
set(KMINI_QUICK_TESTS cli.default_run mpi.cli.default.np2 python.kmini)
# The device tier (ctest -L device; scripts/gpu/run_gpu.sh runs it first on a GPU, in about
# 3 minutes on an H200): the tests whose code paths differ on a device. Every unit test (the
# backend's kernels, both gram engines, every tensor_core_tile), the unit tests at 2 ranks,
# each kernel's deck and its variants at small sizes from the CLI, gram at 2 ranks replicated
# and over the ring (slices and circulant) against one rank byte for byte (their fixtures
# bring the other rank counts), the Python module's tests (CuPy arrays in and out where CuPy
# is) and comm= at 2 ranks.
set(KMINI_DEVICE_TIER "^unit\\." "^mpi\\.[a-z]+\\.gtest\\.np2$" "^cli\\.default_run$" "^mpi\\.cli\\.default\\.np2$"
    "^(mpi\\.)?cli\\.discount\\.variants\\." "^(mpi\\.cli\\.)?rk4\\.variants\\." "^gram\\.small_deck$"
    "^gram\\.micro_kernel\\." "^(mpi\\.)?gram\\.form\\." "^mpi\\.gram\\..*\\.np2$"
    "^mpi\\.gram\\.(sparse\\.|ring\\.circulant\\.)?byte_identical$" "^gram\\.prune$" "^python\\.kmini$"
    "^python\\.kmini_comm(_ring)?_np2$")
# The slow tests (ctest -L slow, -LE slow to leave them out): each takes 30 s or more on the
# 2-core development VM (CONTRIBUTING.md): the read-fault sweep, the FPS checks, pip's
# install into a virtual environment, clang-format over the tree, the unit tests under MPI at one rank.
set(KMINI_SLOW_TIER "^gram\\.read_faults$" "^gram\\.fps$" "^python\\.pip_install$" "^lint\\.clang_format$"
    "^mpi\\.[a-z]+\\.gtest\\.np1$")

# Adds `label` to `test` where its name matches one of the regular expressions.
function(_kmini_label_if_matching test label)
  foreach(re IN LISTS ARGN)
    if(test MATCHES "${re}")
      set_property(TEST ${test} APPEND PROPERTY LABELS ${label})
      return()
    endif()
  endforeach()
endfunction()

# kmini_test_tiers(): labels quick, device and slow the tests of this folder the tiers name. The
# last line of every folder's CMakeLists.txt (labels are per folder; kmini_tests_end checks).
function(kmini_test_tiers)
  get_property(tests DIRECTORY PROPERTY TESTS)
  foreach(t IN LISTS tests)
    if(t IN_LIST KMINI_QUICK_TESTS)
      set_property(TEST ${t} APPEND PROPERTY LABELS quick)
    endif()
    _kmini_label_if_matching(${t} device ${KMINI_DEVICE_TIER})
    _kmini_label_if_matching(${t} slow ${KMINI_SLOW_TIER})
  endforeach()
  set_property(DIRECTORY PROPERTY KMINI_TEST_TIERS_APPLIED TRUE)
endfunction()

# --- begin and end -----------------------------------------------------------------------
# kmini_tests_begin(): in tests/CMakeLists.txt before the folders. Sets what every helper
# reads and makes the programs several folders add sources to (kmini_unit_tests, one per
# backend, kmini_mpi_tests and its rank sweep).
macro(kmini_tests_begin)
  find_package(GTest REQUIRED)
  # Tests are named after the backend they exercise: the device one when there is one.
  set(KMINI_TEST_BACKEND "")
  foreach(_b CUDA HIP SYCL OPENMP THREADS SERIAL)
    if(NOT KMINI_TEST_BACKEND AND _b IN_LIST KMINI_KOKKOS_BACKENDS)
      set(KMINI_TEST_BACKEND ${_b})
    endif()
  endforeach()
  string(TOLOWER "${KMINI_TEST_BACKEND}" KMINI_TEST_BACKEND)
  # GPU builds are often compiled on nodes without a GPU: list the tests when ctest runs, not at build time.
  set(KMINI_GTEST_DISCOVERY "")
  if(KMINI_TEST_BACKEND MATCHES "cuda|hip|sycl" AND CMAKE_VERSION VERSION_GREATER_EQUAL 3.18)
    set(KMINI_GTEST_DISCOVERY DISCOVERY_MODE PRE_TEST)
  endif()

  set(KMINI_TEST_ROOT ${CMAKE_CURRENT_SOURCE_DIR})
  set(KMINI_TEST_BINARY_ROOT ${CMAKE_CURRENT_BINARY_DIR})
  set(KMINI_TEST_SUPPORT ${KMINI_TEST_ROOT}/support)
  set(KMINI_TEST_DATA ${KMINI_TEST_ROOT}/data)
  set(KMINI_TEST_WORK ${KMINI_TEST_BINARY_ROOT}/work)
  file(MAKE_DIRECTORY ${KMINI_TEST_WORK})
  # Every test runs with a private TMPDIR (OpenMPI's session directories live there):
  # unit-test processes make their own (support/private_tmpdir.hpp), commands run through
  # mpiexec or scripts get one from this launcher.
  set(KMINI_TEST_TMP ${KMINI_TEST_WORK}/tmp)
  set(KMINI_TEST_LAUNCHER sh ${KMINI_TEST_SUPPORT}/private_tmpdir.sh ${KMINI_TEST_TMP})

  # OpenMPI refuses to run as root (CI containers) and to start more ranks than cores
  # unless told; MPICH needs neither.
  set(KMINI_MPI_ENV "")
  set(KMINI_MPIEXEC_FLAGS ${MPIEXEC_PREFLAGS})
  execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _mpiexec_version ERROR_QUIET)
  if(_mpiexec_version MATCHES "Open MPI|OpenRTE")
    list(APPEND KMINI_MPIEXEC_FLAGS --oversubscribe)
    set(KMINI_MPI_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1)
  endif()

  # The pythons: KMINI_PYTHON3 runs scripts of the standard library and PyYAML (Debian's
  # python3 first); KMINI_PYTHON_NUMPY the first that imports numpy (else python3, and the
  # script reports the skip); KMINI_NUMPY_PYTHON is Debian's, with numpy (the first python3
  # on PATH may lack it).
  find_program(KMINI_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
  if(NOT KMINI_PYTHON3)
    find_program(KMINI_PYTHON3 NAMES python3)
  endif()
  kmini_find_python(KMINI_PYTHON_NUMPY numpy)
  if(NOT KMINI_PYTHON_NUMPY)
    find_program(KMINI_PYTHON_NUMPY NAMES python3)
  endif()
  set(KMINI_NUMPY_PYTHON python3)
  if(EXISTS /usr/bin/python3)
    set(KMINI_NUMPY_PYTHON /usr/bin/python3)
  endif()

  set(KMINI_TEST_DEFINES KMINI_TEST_WORK="${KMINI_TEST_WORK}" KMINI_TEST_DATA="${KMINI_TEST_DATA}"
      KMINI_TEST_TMP="${KMINI_TEST_TMP}" KMINI_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  _kmini_shared_test_programs()
endmacro()

# kmini_tests_end(): in tests/CMakeLists.txt after the folders. Fails the configure when a
# folder with tests did not label its tiers, then labels tests/'s own (the shared programs').
function(kmini_tests_end)
  get_property(folders DIRECTORY PROPERTY SUBDIRECTORIES)
  foreach(folder IN LISTS folders)
    get_property(tests DIRECTORY ${folder} PROPERTY TESTS)
    get_property(applied DIRECTORY ${folder} PROPERTY KMINI_TEST_TIERS_APPLIED)
    if(tests AND NOT applied)
      message(FATAL_ERROR "kmini: ${folder}/CMakeLists.txt defines tests but does not end with kmini_test_tiers()")
    endif()
  endforeach()
  kmini_test_tiers()
endfunction()
