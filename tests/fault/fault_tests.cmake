# Fault injection through the real binary (issue 9): full disk, file-size
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

foreach(output gram_C rk4_F rk4_checkpoint rk4_delta_csv discount_cv results_json)
  kmini_fault_test(full_disk.${output}.np1 1 full_disk ${output} 1)
  kmini_fault_test(fsize_limit.${output} 1 fsize_limit ${output})
endforeach()
foreach(output gram_C rk4_F rk4_checkpoint discount_cv)
  kmini_fault_test(full_disk.${output}.np2 2 full_disk ${output} 2)
endforeach()
kmini_fault_test(signal.SIGTERM.np1 1 signal SIGTERM 1)
kmini_fault_test(signal.SIGINT.np1 1 signal SIGINT 1)
kmini_fault_test(signal.SIGTERM.np2 2 signal SIGTERM 2)
kmini_fault_test(sigkill 1 sigkill)
kmini_fault_test(long_name.np1 1 long_name 1)
kmini_fault_test(long_name.np2 2 long_name 2)
kmini_fault_test(read_only.np1 1 read_only 1)
kmini_fault_test(read_only.np2 2 read_only 2)
kmini_fault_test(directory_in_the_way.np1 1 directory_in_the_way 1)
kmini_fault_test(directory_in_the_way.np2 2 directory_in_the_way 2)
