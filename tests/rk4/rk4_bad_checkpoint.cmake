# Restarts from a damaged copy of a good checkpoint: copies CHECKPOINT to
# ${OUT}.ckpt.npy with the edit EDIT (see tests/rk4/checkpoint_tamper.cpp;
# RESEAL=1 also stores the edited file's checksum), checks that the copy
# differs from the original, then runs kmini on it like run_kmini.cmake.
cmake_minimum_required(VERSION 3.19)
set(damaged ${OUT}.ckpt.npy)
file(REMOVE ${damaged})
set(reseal "")
if(RESEAL)
  set(reseal --reseal)
endif()
execute_process(COMMAND ${TAMPER} ${CHECKPOINT} ${damaged} ${EDIT} ${reseal} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tamper ${EDIT} ${reseal}: exit ${rc}: ${err}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${CHECKPOINT} ${damaged} RESULT_VARIABLE same)
if(same EQUAL 0)
  message(FATAL_ERROR "tamper ${EDIT} ${reseal} left the checkpoint unchanged")
endif()
list(APPEND ARGS --set rk4.restart=${damaged})
include(${CMAKE_CURRENT_LIST_DIR}/../support/run_kmini.cmake)
