# kmini's test harness: the helpers every test file of tests/ calls. Included by
# tests/CMakeLists.txt after KMINI_TEST_LAUNCHER, KMINI_TEST_WORK, KMINI_MPI_ENV and
# the MPI launcher are set; paths below are the including directory's (tests/).

# --- CLI tests ------------------------------------------------------------------
# kmini_cli_test(NAME [NP n] EXIT code [STDERR regex] [STDOUT regex] [VERIFIED kernel...]
#                [SCRIPT other.cmake] [DEFS -DKEY=VALUE...] ARGS ...)
# SCRIPT replaces cli/run_kmini.cmake for tests that run kmini several times (DEFS go to it).
function(kmini_cli_test name)
  cmake_parse_arguments(T "" "NP;EXIT;STDERR;STDOUT;RANKS;SCRIPT" "ARGS;VERIFIED;FILES;DEFS" ${ARGN})
  if(NOT DEFINED T_NP)
    set(T_NP 0)
  endif()
  if(NOT T_SCRIPT)
    set(T_SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/cli/run_kmini.cmake)
  endif()
  set(out ${KMINI_TEST_WORK}/${name})
  add_test(NAME ${name}
           COMMAND ${KMINI_TEST_LAUNCHER} ${CMAKE_COMMAND}
             -DKMINI=$<TARGET_FILE:kmini> -DNP=${T_NP} -DMPIEXEC=${MPIEXEC_EXECUTABLE}
             "-DMPIEXEC_FLAGS=${MPIEXEC_NUMPROC_FLAG};${T_NP};${KMINI_MPIEXEC_FLAGS}"
             -DEXPECT_EXIT=${T_EXIT} "-DEXPECT_STDERR=${T_STDERR}" "-DEXPECT_STDOUT=${T_STDOUT}"
             "-DEXPECT_VERIFIED=${T_VERIFIED}" "-DEXPECT_RANKS=${T_RANKS}" "-DEXPECT_FILES=${T_FILES}"
             -DOUT=${out} "-DARGS=${T_ARGS}" ${T_DEFS}
             -P ${T_SCRIPT}
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set(procs 1)
  if(T_NP GREATER 1)
    set(procs ${T_NP})
  endif()
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "${KMINI_MPI_ENV}" LABELS cli PROCESSORS ${procs} TIMEOUT 600)
endfunction()

# --- Python scripts ---------------------------------------------------------------
# kmini_python_test(NAME SCRIPT ARGS...): a script of the standard library and PyYAML
# (Debian's python3); skipped (exit 77) without python3.
find_program(KMINI_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT KMINI_PYTHON3)
  find_program(KMINI_PYTHON3 NAMES python3)
endif()
function(kmini_python_test name)
  if(KMINI_PYTHON3)
    add_test(NAME ${name} COMMAND ${KMINI_TEST_LAUNCHER} ${KMINI_PYTHON3} ${ARGN})
  else()
    add_test(NAME ${name} COMMAND sh -c "echo 'no python3: skipped'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 LABELS project TIMEOUT 300
                                           ENVIRONMENT "${KMINI_MPI_ENV}")
endfunction()

# kmini_python_mpi_test(NAME NP SCRIPT ARGS...): python/SCRIPT under the MPI launcher at
# NP ranks, with the built module on PYTHONPATH; a script exits 77 to be skipped.
function(kmini_python_mpi_test name np script)
  add_test(NAME ${name}
           COMMAND ${KMINI_TEST_LAUNCHER} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${KMINI_MPIEXEC_FLAGS}
                   ${KMINI_PYTHON_MODULE_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/${script} ${ARGN})
  set_tests_properties(${name} PROPERTIES ENVIRONMENT "PYTHONPATH=${KMINI_PYTHON_MODULE_PATH};${KMINI_MPI_ENV}"
                       LABELS "python;mpi" PROCESSORS ${np} TIMEOUT 120 SKIP_RETURN_CODE 77)
endfunction()

# --- presets ------------------------------------------------------------------------
# kmini_preset_test(NAME PRESET EXPECT [DEFS...]): the preset's configure fails with
# one line matching EXPECT (a throwaway build directory; cmake/KminiBackend.cmake).
function(kmini_preset_test name preset expect)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR} -DWORK=${KMINI_TEST_WORK}/${name}
                                -DPRESET=${preset} "-DEXPECT=${expect}" ${ARGN}
                                -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/preset_backend.cmake)
  set_tests_properties(${name} PROPERTIES LABELS project TIMEOUT 300)
endfunction()
