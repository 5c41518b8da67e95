# GoogleTest programs, one harness, Cabana's (and Kokkos'): tests that need no backend
# (decks, .npy, JSON, the command line, results, sizes, checkpoints) in kmini_unit_tests;
# the kernel test bodies (tests/<kernel>/test_*.hpp, written as TEST(TEST_CATEGORY, ...))
# compiled once per enabled backend after that backend's category header
# (tests/support/backends/category_<backend>.hpp), one program per backend: ctest names
# unit.<backend>.<Kernel>_<Test>. The MPI tests are one program run at 1 to 4 ranks.

# _kmini_discover_unit_tests(TARGET ARGS...): gtest_discover_tests(TARGET ARGS...), then a
# script ctest includes after the discovered list (TARGET_TESTS) labels them unit, quick and
# device (named *_include.cmake: scripts/gpu/bundle.sh packs those).
function(_kmini_discover_unit_tests target)
  gtest_discover_tests(${target} ${ARGN} WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_tiers_include.cmake")
  file(WRITE ${script} "foreach(t IN LISTS ${target}_TESTS)\n"
                       "  set_tests_properties(\"\${t}\" PROPERTIES LABELS \"unit;quick;device\")\nendforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${script})
endfunction()

# The programs several folders add to; kmini_tests_begin calls this.
macro(_kmini_shared_test_programs)
  add_executable(kmini_unit_tests ${KMINI_TEST_SUPPORT}/test_main.cpp)
  target_link_libraries(kmini_unit_tests PRIVATE kmini_lib GTest::gtest)
  target_include_directories(kmini_unit_tests PRIVATE ${KMINI_TEST_ROOT})
  target_compile_definitions(kmini_unit_tests PRIVATE ${KMINI_TEST_DEFINES})
  _kmini_discover_unit_tests(kmini_unit_tests TEST_PREFIX "unit." DISCOVERY_TIMEOUT 60 ${KMINI_GTEST_DISCOVERY}
                             PROPERTIES ENVIRONMENT "${KMINI_MPI_ENV}" LABELS unit)

  set(KMINI_TEST_CATEGORIES "")
  foreach(_b CUDA HIP OPENMP THREADS SERIAL)
    if(_b IN_LIST KMINI_KOKKOS_BACKENDS)
      string(TOLOWER ${_b} _category)
      list(APPEND KMINI_TEST_CATEGORIES ${_category})
    endif()
  endforeach()
  foreach(_category ${KMINI_TEST_CATEGORIES})
    add_executable(kmini_unit_tests_${_category} ${KMINI_TEST_SUPPORT}/test_main.cpp)
    target_link_libraries(kmini_unit_tests_${_category} PRIVATE kmini_lib GTest::gtest)
    target_include_directories(kmini_unit_tests_${_category} PRIVATE ${KMINI_TEST_ROOT})
    target_compile_definitions(kmini_unit_tests_${_category} PRIVATE ${KMINI_TEST_DEFINES})
    if(_category STREQUAL KMINI_TEST_BACKEND)
      # Tests of the app's own pieces bound to the default execution space.
      target_compile_definitions(kmini_unit_tests_${_category} PRIVATE KMINI_TEST_DEFAULT_BACKEND=1)
    endif()
    _kmini_discover_unit_tests(kmini_unit_tests_${_category} TEST_PREFIX "unit." DISCOVERY_TIMEOUT 60
                               ${KMINI_GTEST_DISCOVERY} PROPERTIES ENVIRONMENT "${KMINI_MPI_ENV}" LABELS unit)
  endforeach()

  add_executable(kmini_mpi_tests ${KMINI_TEST_SUPPORT}/mpi_test_main.cpp)
  target_link_libraries(kmini_mpi_tests PRIVATE kmini_lib GTest::gtest)
  target_include_directories(kmini_mpi_tests PRIVATE ${KMINI_TEST_ROOT})
  target_compile_definitions(kmini_mpi_tests PRIVATE KMINI_TEST_WORK="${KMINI_TEST_WORK}")
  # Oversubscribed on small machines (4 ranks on 2 cores): minutes each, hence the timeout.
  foreach(np 1 2 3 4)
    kmini_test(mpi.${KMINI_TEST_BACKEND}.gtest.np${np}
               COMMAND ${KMINI_TEST_LAUNCHER} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${KMINI_MPIEXEC_FLAGS}
                       $<TARGET_FILE:kmini_mpi_tests> ${MPIEXEC_POSTFLAGS}
               ENVIRONMENT ${KMINI_MPI_ENV} LABELS mpi PROCESSORS ${np} TIMEOUT 600)
  endforeach()
endmacro()

# kmini_unit_test(SOURCES...): GoogleTest sources that need no backend, into kmini_unit_tests
# (ctest: unit.<Suite>.<Test>).
function(kmini_unit_test)
  list(TRANSFORM ARGN PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  target_sources(kmini_unit_tests PRIVATE ${ARGN})
endfunction()

# kmini_mpi_unit_test(SOURCES...): GoogleTest sources run at 1 to 4 ranks, into kmini_mpi_tests
# (ctest: mpi.<backend>.gtest.np<N>).
function(kmini_mpi_unit_test)
  list(TRANSFORM ARGN PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  target_sources(kmini_mpi_tests PRIVATE ${ARGN})
endfunction()

# kmini_backend_test([ANY_SPACE] BODIES...): test bodies (TEST(TEST_CATEGORY, ...)) compiled
# into the program of every backend. ANY_SPACE: their Views live in the category's memory
# space, so they run on every backend; the others call kmini's kernels as the app builds them,
# in the default memory space: on a host-only build every host backend reaches that memory, on
# a GPU build only the GPU category does (a Serial category of a CUDA+Serial build runs the
# ANY_SPACE bodies only).
function(kmini_backend_test)
  cmake_parse_arguments(T "ANY_SPACE" "" "" ${ARGN})
  foreach(category IN LISTS KMINI_TEST_CATEGORIES)
    if(NOT T_ANY_SPACE AND NOT category STREQUAL KMINI_TEST_BACKEND AND KMINI_TEST_BACKEND MATCHES "cuda|hip|sycl")
      continue()
    endif()
    foreach(body IN LISTS T_UNPARSED_ARGUMENTS)
      get_filename_component(stem ${body} NAME_WE)
      set(generated ${KMINI_TEST_BINARY_ROOT}/generated/${category}/${stem}_${category}.cpp)
      file(RELATIVE_PATH KMINI_TEST_BODY ${KMINI_TEST_ROOT} ${CMAKE_CURRENT_SOURCE_DIR}/${body})
      set(KMINI_TEST_CATEGORY ${category})
      configure_file(${KMINI_TEST_SUPPORT}/backends/test_source.cpp.in ${generated} @ONLY)
      target_sources(kmini_unit_tests_${category} PRIVATE ${generated})
    endforeach()
  endforeach()
endfunction()

# kmini_micro_kernel_tests(VARIANT TESTS TARGETS "march|features"...): each host micro-kernel
# as its target compiles it: one program per -march, VARIANT alone compiled for the target (no
# kmini_flags, no kmini_lib: nothing compiled for another target shares the binary), TESTS for
# baseline x86-64; they skip, printing why, what this CPU cannot run (CI's CPU changes).
# features: the CPU features the target needs, as __builtin_cpu_supports names them.
# ctest: unit.micro_kernels.<target>.<Suite>.<Test>. x86-64 host builds only.
function(kmini_micro_kernel_tests variant tests)
  cmake_parse_arguments(T "" "" "TARGETS" ${ARGN})
  if(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" OR KMINI_KOKKOS_BACKENDS MATCHES "CUDA|HIP|SYCL")
    return()
  endif()
  include(CheckCXXCompilerFlag)
  foreach(entry IN LISTS T_TARGETS)
    string(REPLACE "|" ";" entry "${entry}")
    list(GET entry 0 march)
    list(GET entry 1 requires)
    string(MAKE_C_IDENTIFIER "${march}" id)
    check_cxx_compiler_flag(-march=${march} KMINI_MK_MARCH_${id})
    if(NOT KMINI_MK_MARCH_${id})
      continue()
    endif()
    # The variant for the target (an object library keeps -march off the test bodies).
    add_library(kmini_mk_variant_${id} OBJECT ${variant})
    target_link_libraries(kmini_mk_variant_${id} PRIVATE kmini::kokkos)
    target_include_directories(kmini_mk_variant_${id} PRIVATE ${KMINI_TEST_ROOT} ${PROJECT_SOURCE_DIR}/src)
    target_compile_options(kmini_mk_variant_${id} PRIVATE -march=${march} -Wall -Wextra)
    add_executable(kmini_micro_kernel_tests_${id} ${tests} $<TARGET_OBJECTS:kmini_mk_variant_${id}>)
    target_link_libraries(kmini_micro_kernel_tests_${id} PRIVATE kmini::kokkos GTest::gtest_main)
    target_include_directories(kmini_micro_kernel_tests_${id} PRIVATE ${KMINI_TEST_ROOT})
    target_compile_definitions(kmini_micro_kernel_tests_${id} PRIVATE KMINI_MK_TARGET="${march}"
                                                                      KMINI_MK_REQUIRES="${requires}")
    target_compile_options(kmini_micro_kernel_tests_${id} PRIVATE -Wall -Wextra)
    _kmini_discover_unit_tests(kmini_micro_kernel_tests_${id} TEST_PREFIX "unit.micro_kernels.${id}."
                               DISCOVERY_TIMEOUT 60 PROPERTIES LABELS unit)
  endforeach()
endfunction()
