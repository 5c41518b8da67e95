# Tests that run a command or a script: the generic kmini_test, Python scripts (alone and
# under the MPI launcher), the backend presets and the fault injection.

# kmini_test(NAME COMMAND command args... [WORKING_DIRECTORY dir] [property keywords]): one
# test, run in KMINI_TEST_BINARY_ROOT unless told. An argument that holds a ';' or is empty
# does not survive a function's arguments: such a test is an add_test of its own.
function(kmini_test name)
  cmake_parse_arguments(T "" "WORKING_DIRECTORY" "COMMAND;${KMINI_TEST_PROPERTY_KEYS}" ${ARGN})
  if(NOT T_WORKING_DIRECTORY)
    set(T_WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND} WORKING_DIRECTORY ${T_WORKING_DIRECTORY})
  _kmini_test_properties(${name} T)
endfunction()

# kmini_skip_test(NAME REASON [property keywords]): a test that reports REASON and is skipped
# (exit 77), where what it needs is missing from this build.
function(kmini_skip_test name reason)
  cmake_parse_arguments(T "" "" "${KMINI_TEST_PROPERTY_KEYS}" ${ARGN})
  add_test(NAME ${name} COMMAND sh -c "echo '${reason}'; exit 77" WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
  _kmini_test_properties(${name} T)
endfunction()

# kmini_python_test(NAME SCRIPT ARGS... [property keywords]): a script of the standard library
# and PyYAML (KMINI_PYTHON3, Debian's python3); skipped (exit 77) without python3. Labelled
# project unless told.
function(kmini_python_test name)
  cmake_parse_arguments(T "" "" "${KMINI_TEST_PROPERTY_KEYS}" ${ARGN})
  if(KMINI_PYTHON3)
    add_test(NAME ${name} COMMAND ${KMINI_TEST_LAUNCHER} ${KMINI_PYTHON3} ${T_UNPARSED_ARGUMENTS}
             WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'no python3: skipped'; exit 77" WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS project TIMEOUT 300
                                           ENVIRONMENT "${KMINI_MPI_ENV}")
  _kmini_test_properties(${name} T)
endfunction()

# kmini_python_mpi_test(NAME NP SCRIPT ARGS...): tests/python/SCRIPT under the MPI launcher at
# NP ranks, with the built module on PYTHONPATH; a script exits 77 to be skipped.
function(kmini_python_mpi_test name np script)
  add_test(NAME ${name}
           COMMAND ${KMINI_TEST_LAUNCHER} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${KMINI_MPIEXEC_FLAGS}
                   ${KMINI_PYTHON_MODULE_PYTHON} ${KMINI_TEST_ROOT}/python/${script} ${ARGN}
           WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "PYTHONPATH=${KMINI_PYTHON_MODULE_PATH};${KMINI_MPI_ENV}"
                       LABELS "python;mpi" PROCESSORS ${np} TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()

# kmini_preset_test(NAME PRESET EXPECT [DEFS...]): the preset's configure fails with one line
# matching EXPECT (a throwaway build directory; cmake/KminiBackend.cmake).
function(kmini_preset_test name preset expect)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR} -DWORK=${KMINI_TEST_WORK}/${name}
                                -DPRESET=${preset} "-DEXPECT=${expect}" ${ARGN}
                                -P ${KMINI_TEST_SUPPORT}/preset_backend.cmake
           WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set_tests_properties(${name} PROPERTIES LABELS project TIMEOUT 300)
endfunction()

# kmini_fault_test(NAME PROCS ARGS...): fault.NAME, tests/fault/fault_injection.py ARGS through
# the real binary (standard-library Python, KMINI_ANY_PYTHON) on PROCS ranks; scenarios that
# need root report "skipped" (exit 77) without it.
function(kmini_fault_test name procs)
  set(mpiexec "${MPIEXEC_EXECUTABLE};${KMINI_MPIEXEC_FLAGS}")
  add_test(NAME fault.${name}
           COMMAND ${KMINI_TEST_LAUNCHER} ${KMINI_ANY_PYTHON} ${KMINI_TEST_ROOT}/fault/fault_injection.py ${ARGN}
           WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set_tests_properties(fault.${name} PROPERTIES
    ENVIRONMENT "${KMINI_MPI_ENV};KMINI=$<TARGET_FILE:kmini>;WORK=${KMINI_TEST_WORK}/fault;MPIEXEC=${mpiexec}"
    LABELS fault PROCESSORS ${procs} SKIP_RETURN_CODE 77 TIMEOUT 300)
endfunction()

# kmini_fault_binary_test(NAME FILTER): fault.binary.NAME, the bad-input cases of
# BadInputBinary.FILTER through the real binary, with the deck-key rules the fixture
# fault.deck_key_rules writes (KMINI_DECK_KEY_RULES); a NAME ending in np2 runs at 2 ranks.
function(kmini_fault_binary_test name filter)
  add_test(NAME fault.binary.${name} COMMAND ${KMINI_TEST_LAUNCHER} $<TARGET_FILE:kmini_fault_binary_tests>
                                             --gtest_filter=BadInputBinary.${filter}
           WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set(procs 1)
  set(labels fault)
  if(name MATCHES "np2$")
    set(procs 2)
    set(labels fault mpi)
  endif()
  set_tests_properties(fault.binary.${name} PROPERTIES
                       ENVIRONMENT "KMINI_DECK_KEY_RULES=${KMINI_DECK_KEY_RULES};${KMINI_MPI_ENV}"
                       FIXTURES_REQUIRED kmini_deck_key_rules LABELS "${labels}" PROCESSORS ${procs} TIMEOUT 300)
endfunction()
