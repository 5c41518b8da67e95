# Issue 9's generator-driven bad-input test (label `fault`): generated bad
# decks, --set/--out forms and mutated .npy files must each give exit 2, one
# `kmini: error:` line naming what it should, and write nothing.
#  - fault.Generated/...: in process, one ctest test per family (run_app is
#    called with generated argv; a kmini start costs ~0.45 s, so hundreds of
#    processes would not fit CI's two minutes);
#  - fault.binary.*: a sample through the real binary (2 of them at 2 ranks),
#    and the families that crash or hang a process today.
# KMINI_FAULT_SEED=N in the environment generates other cases.

# The generators: plain C++, no MPI or Kokkos.
add_library(kmini_fault_cases STATIC
  fault/bad_input_common.cpp
  fault/case_support.cpp
  fault/deck_cases.cpp
  fault/npy_cases.cpp
)
target_link_libraries(kmini_fault_cases PUBLIC kmini_flags)

add_executable(kmini_fault_tests fault/test_main.cpp fault/in_process.cpp fault/test_bad_input_generator.cpp)
target_link_libraries(kmini_fault_tests PRIVATE kmini_fault_cases kmini_lib GTest::gtest)
target_compile_definitions(kmini_fault_tests PRIVATE KMINI_TEST_WORK="${KMINI_TEST_WORK}")
gtest_discover_tests(kmini_fault_tests TEST_PREFIX "fault." DISCOVERY_TIMEOUT 60 ${KMINI_GTEST_DISCOVERY}
                     PROPERTIES ENVIRONMENT "${KMINI_MPI_ENV}" LABELS fault TIMEOUT 120)

add_executable(kmini_fault_binary_tests fault/test_bad_input_binary.cpp)
target_link_libraries(kmini_fault_binary_tests PRIVATE kmini_fault_cases GTest::gtest)
add_dependencies(kmini_fault_binary_tests kmini)
string(REPLACE ";" "\\;" _fault_mpiexec_flags "${MPIEXEC_NUMPROC_FLAG};NP;${KMINI_MPIEXEC_FLAGS}")
target_compile_definitions(kmini_fault_binary_tests PRIVATE
  KMINI_TEST_WORK="${KMINI_TEST_WORK}" KMINI_EXE="$<TARGET_FILE:kmini>" KMINI_MPIEXEC="${MPIEXEC_EXECUTABLE}"
  "KMINI_MPIEXEC_FLAGS=\"${_fault_mpiexec_flags}\"")
foreach(_t decks:SampleOfGeneratedDecks npy:SampleOfMutatedNpyFiles mpi_np2:TwoRanks oversize:OversizeValues
           kokkos_flags:MalformedKokkosFlags)
  string(REPLACE ":" ";" _t "${_t}")
  list(GET _t 0 _name)
  list(GET _t 1 _filter)
  add_test(NAME fault.binary.${_name} COMMAND kmini_fault_binary_tests --gtest_filter=BadInputBinary.${_filter})
  set(_procs 1)
  set(_labels fault)
  if(_name STREQUAL "mpi_np2")
    set(_procs 2)
    set(_labels fault mpi)
  endif()
  set_tests_properties(fault.binary.${_name} PROPERTIES ENVIRONMENT "${KMINI_MPI_ENV}" LABELS "${_labels}"
                       PROCESSORS ${_procs} TIMEOUT 300)
endforeach()
