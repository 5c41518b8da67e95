# CLI tests: the kmini executable run through a CMake script (tests/support/run_kmini.cmake)
# that checks its exit status, messages, results.json and the files it wrote.

# kmini_cli_test(NAME [NP n...] EXIT code [STDERR regex] [STDOUT regex] [VERIFIED kernel...]
#                [RANKS n] [FILES file...] [SCRIPT other.cmake] [DEFS -DKEY=VALUE...]
#                [MPI_TWIN NAME2] [property keywords] ARGS ...)
# NP: the rank count (0, the default: no launcher). NP with several counts (or @NP@ in NAME):
# one test per count, @NP@ in NAME, RANKS, STDOUT, STDERR, FILES, DEFS and ARGS replaced by it.
# MPI_TWIN: the same test again at 2 ranks, named NAME2. SCRIPT replaces run_kmini.cmake for
# tests that run kmini several times (DEFS go to it). Property keywords (LABELS, TIMEOUT,
# FIXTURES_SETUP, ...: KMINI_TEST_PROPERTY_KEYS) apply to every test it makes.
function(kmini_cli_test name)
  cmake_parse_arguments(T "" "EXIT;STDERR;STDOUT;RANKS;SCRIPT;MPI_TWIN"
                        "NP;ARGS;VERIFIED;FILES;DEFS;${KMINI_TEST_PROPERTY_KEYS}" ${ARGN})
  if(NOT DEFINED T_NP)
    set(T_NP 0)
  endif()
  if(NOT T_SCRIPT)
    set(T_SCRIPT ${KMINI_TEST_SUPPORT}/run_kmini.cmake)
  endif()
  list(LENGTH T_NP count)
  if(count GREATER 1 OR name MATCHES "@NP@")
    set(fields ARGS VERIFIED FILES DEFS RANKS STDOUT STDERR)
    foreach(np IN LISTS T_NP)
      foreach(field IN LISTS fields)
        string(REPLACE "@NP@" "${np}" C_${field} "${T_${field}}")
      endforeach()
      string(REPLACE "@NP@" "${np}" case_name "${name}")
      _kmini_cli_case(${case_name} ${np} C)
    endforeach()
  else()
    _kmini_cli_case(${name} ${T_NP} T)
  endif()
  if(T_MPI_TWIN)
    _kmini_cli_case(${T_MPI_TWIN} 2 T)
  endif()
endfunction()

# _kmini_cli_case(NAME NP PREFIX): one CLI test from PREFIX_ARGS, PREFIX_STDERR, ... (the
# caller's parsed arguments; the script and properties from T_).
function(_kmini_cli_case name np p)
  set(out ${KMINI_TEST_WORK}/${name})
  add_test(NAME ${name}
           COMMAND ${KMINI_TEST_LAUNCHER} ${CMAKE_COMMAND}
             -DKMINI=$<TARGET_FILE:kmini> -DNP=${np} -DMPIEXEC=${MPIEXEC_EXECUTABLE}
             "-DMPIEXEC_FLAGS=${MPIEXEC_NUMPROC_FLAG};${np};${KMINI_MPIEXEC_FLAGS}"
             -DEXPECT_EXIT=${T_EXIT} "-DEXPECT_STDERR=${${p}_STDERR}" "-DEXPECT_STDOUT=${${p}_STDOUT}"
             "-DEXPECT_VERIFIED=${${p}_VERIFIED}" "-DEXPECT_RANKS=${${p}_RANKS}" "-DEXPECT_FILES=${${p}_FILES}"
             -DOUT=${out} "-DARGS=${${p}_ARGS}" ${${p}_DEFS}
             -P ${T_SCRIPT}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set(procs 1)
  if(np GREATER 1)
    set(procs ${np})
  endif()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${KMINI_MPI_ENV}" LABELS cli PROCESSORS ${procs} TIMEOUT 600)
  _kmini_test_properties(${name} T)
endfunction()

# kmini_usage_test(NAME [NP n] STDERR regex ARGS ...): an ambiguous deck or command line: exit
# 2, one line naming the deck line or the --set / option, and nothing written.
function(kmini_usage_test name)
  cmake_parse_arguments(U "" "NP;STDERR" "ARGS" ${ARGN})
  if(NOT DEFINED U_NP)
    set(U_NP 0)
  endif()
  kmini_cli_test(${name} NP ${U_NP} EXIT 2 STDERR "${U_STDERR}" DEFS -DEXPECT_NOTHING_WRITTEN=ON ARGS ${U_ARGS})
endfunction()

# kmini_compare_outputs(NAME RUNS test... FILES file... FIXTURE fixture): the FILES each RUN
# (a test's folder under KMINI_TEST_WORK) wrote are byte-identical to the first RUN's.
function(kmini_compare_outputs name)
  cmake_parse_arguments(T "" "FIXTURE" "RUNS;FILES" ${ARGN})
  # add_test here, not kmini_test: a function's arguments would split the lists.
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DWORK=${KMINI_TEST_WORK} "-DRUNS=${T_RUNS}" "-DFILES=${T_FILES}"
                                -P ${KMINI_TEST_SUPPORT}/compare_outputs.cmake
           WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED ${T_FIXTURE} LABELS cli)
endfunction()

# kmini_compare_pairs(NAME PAIRS reference copy... FIXTURES fixture...): each copy is
# byte-identical to the reference before it.
function(kmini_compare_pairs name)
  cmake_parse_arguments(T "" "" "PAIRS;FIXTURES" ${ARGN})
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} "-DPAIRS=${T_PAIRS}" -P ${KMINI_TEST_SUPPORT}/compare_pairs.cmake
           WORKING_DIRECTORY ${KMINI_TEST_BINARY_ROOT})
  set_tests_properties(${name} PROPERTIES FIXTURES_REQUIRED "${T_FIXTURES}" LABELS mpi)
endfunction()
