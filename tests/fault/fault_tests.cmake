# The fault tests (label `fault`), in two parts: generated bad input
# (below) and fault injection through the real binary (after it).
#
# The generator-driven bad-input test (label `fault`): generated bad
# decks, --set/--out forms and mutated .npy files must each give exit 2, one
# `kmini: error:` line naming what it should, and write nothing.
#  - fault.Generated/...: in process, one ctest test per family (run_app is
#    called with generated argv; a kmini start costs ~0.45 s, so hundreds of
#    processes would not fit CI's two minutes);
#  - fault.binary.*: a sample through the real binary (2 of them at 2 ranks),
#    and the families that would crash or hang the test process on a regression.
# KMINI_FAULT_SEED=N in the environment generates other cases.

# The generators: plain C++, no MPI or Kokkos.
add_library(kmini_fault_cases STATIC
  fault/bad_input_common.cpp
  fault/case_support.cpp
  fault/deck_cases.cpp
  fault/deck_input_cases.cpp
  fault/deck_syntax_cases.cpp
  fault/npy_cases.cpp
)
target_link_libraries(kmini_fault_cases PUBLIC kmini_flags)

add_executable(kmini_fault_tests fault/test_main.cpp fault/in_process.cpp fault/test_bad_input_generator.cpp
                                 fault/deck_key_rules_writer.cpp)
target_link_libraries(kmini_fault_tests PRIVATE kmini_fault_cases kmini_lib GTest::gtest)
target_compile_definitions(kmini_fault_tests PRIVATE KMINI_TEST_WORK="${KMINI_TEST_WORK}" KMINI_TEST_TMP="${KMINI_TEST_TMP}"
                                                   KMINI_SOURCE_DIR="${PROJECT_SOURCE_DIR}")

# What every deck key accepts, read from the code that checks it (deck/ records
# each accessor's rule as configure() reads the deck): written once by the
# fixture fault.deck_key_rules, read by every test that generates deck cases.
set(KMINI_DECK_KEY_RULES ${KMINI_TEST_WORK}/deck_key_rules.tsv)
add_test(NAME fault.deck_key_rules
         COMMAND ${KMINI_TEST_LAUNCHER} $<TARGET_FILE:kmini_fault_tests> --write-deck-key-rules ${KMINI_DECK_KEY_RULES})
set_tests_properties(fault.deck_key_rules PROPERTIES FIXTURES_SETUP kmini_deck_key_rules
                     ENVIRONMENT "${KMINI_MPI_ENV}" LABELS fault TIMEOUT 120)
# One environment variable only: gtest_discover_tests (CMake 3.25) splits a
# list value into separate property arguments. (MPI starts as a singleton here:
# no mpirun, so no OMPI_* variables are needed.)
gtest_discover_tests(kmini_fault_tests TEST_PREFIX "fault." DISCOVERY_TIMEOUT 60 ${KMINI_GTEST_DISCOVERY}
                     PROPERTIES FIXTURES_REQUIRED kmini_deck_key_rules LABELS fault TIMEOUT 120
                                ENVIRONMENT "KMINI_DECK_KEY_RULES=${KMINI_DECK_KEY_RULES}")

add_executable(kmini_fault_binary_tests fault/test_bad_input_binary.cpp)
target_link_libraries(kmini_fault_binary_tests PRIVATE kmini_fault_cases GTest::gtest)
add_dependencies(kmini_fault_binary_tests kmini)
string(REPLACE ";" "\\;" _fault_mpiexec_flags "${MPIEXEC_NUMPROC_FLAG};NP;${KMINI_MPIEXEC_FLAGS}")
target_compile_definitions(kmini_fault_binary_tests PRIVATE
  KMINI_TEST_WORK="${KMINI_TEST_WORK}" KMINI_EXE="$<TARGET_FILE:kmini>" KMINI_MPIEXEC="${MPIEXEC_EXECUTABLE}"
  "KMINI_MPIEXEC_FLAGS=\"${_fault_mpiexec_flags}\"")
if(KMINI_TEST_BACKEND MATCHES "cuda|hip|sycl")
  target_compile_definitions(kmini_fault_binary_tests PRIVATE KMINI_TEST_DEVICE_BACKEND=1)
endif()
foreach(_t decks:SampleOfGeneratedDecks npy:SampleOfMutatedNpyFiles mpi_np2:TwoRanks oversize:OversizeValues
           kokkos_flags:MalformedKokkosFlags special_files:SpecialFiles kokkos_environment:KokkosEnvironmentAndTools
           special_files_np2:SpecialFilesAndKokkosEnvironmentTwoRanks)
  string(REPLACE ":" ";" _t "${_t}")
  list(GET _t 0 _name)
  list(GET _t 1 _filter)
  add_test(NAME fault.binary.${_name} COMMAND ${KMINI_TEST_LAUNCHER} $<TARGET_FILE:kmini_fault_binary_tests>
           --gtest_filter=BadInputBinary.${_filter})
  set(_procs 1)
  set(_labels fault)
  if(_name MATCHES "np2$")
    set(_procs 2)
    set(_labels fault mpi)
  endif()
  set_tests_properties(fault.binary.${_name} PROPERTIES
                       ENVIRONMENT "KMINI_DECK_KEY_RULES=${KMINI_DECK_KEY_RULES};${KMINI_MPI_ENV}"
                       FIXTURES_REQUIRED kmini_deck_key_rules LABELS "${_labels}" PROCESSORS ${_procs} TIMEOUT 300)
endforeach()

# ---------------------------------------------------------------------------------
# Fault injection through the real binary: full disk, file-size
# limit, signals mid-write, SIGKILL, long names, read-only file systems, at 1
# and 2 ranks. Scenarios that need root (mount) report "skipped" (exit 77)
# without it. The driver uses only Python's standard library.
find_program(KMINI_ANY_PYTHON NAMES python3 PATHS /usr/bin)
if(NOT KMINI_ANY_PYTHON)
  message(WARNING "kmini: no python3: the fault-injection tests are not registered")
  return()
endif()
set(_fault_mpiexec "${MPIEXEC_EXECUTABLE};${KMINI_MPIEXEC_FLAGS}")
function(kmini_fault_test name procs)
  add_test(NAME fault.${name}
           COMMAND ${KMINI_TEST_LAUNCHER} ${KMINI_ANY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/fault/fault_injection.py ${ARGN})
  set_tests_properties(fault.${name} PROPERTIES
    ENVIRONMENT "${KMINI_MPI_ENV};KMINI=$<TARGET_FILE:kmini>;WORK=${KMINI_TEST_WORK}/fault;MPIEXEC=${_fault_mpiexec}"
    LABELS fault PROCESSORS ${procs} SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

foreach(output gram_C gram_top_k gram_pairs rk4_F rk4_checkpoint rk4_delta_csv discount_cv results_json)
  kmini_fault_test(full_disk.${output}.np1 1 full_disk ${output} 1)
  kmini_fault_test(fsize_limit.${output} 1 fsize_limit ${output})
endforeach()
foreach(output gram_C gram_top_k gram_pairs rk4_F rk4_checkpoint discount_cv)
  kmini_fault_test(full_disk.${output}.np2 2 full_disk ${output} 2)
endforeach()
kmini_fault_test(signal.SIGTERM.np1 1 signal SIGTERM 1)
kmini_fault_test(signal.SIGINT.np1 1 signal SIGINT 1)
kmini_fault_test(signal.SIGTERM.np2 2 signal SIGTERM 2)
kmini_fault_test(sigkill 1 sigkill)
# gram.distribution: ring, one rank signalled mid-ring.
kmini_fault_test(ring_rank.np2 2 ring_rank 2)
kmini_fault_test(ring_rank.np3 3 ring_rank 3)
kmini_fault_test(ring_rank_circulant.np2 2 ring_rank_circulant 2)
kmini_fault_test(ring_rank_circulant.np3 3 ring_rank_circulant 3)
kmini_fault_test(long_name.np1 1 long_name 1)
kmini_fault_test(long_name.np2 2 long_name 2)
kmini_fault_test(read_only.np1 1 read_only 1)
kmini_fault_test(read_only.np2 2 read_only 2)
kmini_fault_test(directory_in_the_way.np1 1 directory_in_the_way 1)
kmini_fault_test(directory_in_the_way.np2 2 directory_in_the_way 2)
