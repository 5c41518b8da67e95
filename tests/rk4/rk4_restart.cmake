# Runs the rk4 kernel three ways and compares outputs byte for byte:
#   full   : STEPS steps in one run;   again: the same run once more;
#   part   : STEPS/2 steps with a checkpoint at the end; resume: restart from it to STEPS.
# delta.npy, F.npy and G.npy of `again` and `resume` must equal those of `full`.
cmake_minimum_required(VERSION 3.19)
file(REMOVE_RECURSE ${OUT})
if(NP GREATER 0)
  set(launch ${MPIEXEC} ${MPIEXEC_FLAGS} ${KMINI})
else()
  set(launch ${KMINI})
endif()
math(EXPR half "${STEPS} / 2")
set(writes --set rk4.write.delta=delta.npy --set rk4.write.F=F.npy --set rk4.write.G=G.npy)

function(run_kmini dir)
  execute_process(COMMAND ${launch} ${ARGS} ${ARGN} --out ${OUT}/${dir}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 500)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${dir}: exit ${rc}\n${out}\n${err}")
  endif()
endfunction()

run_kmini(full --set rk4.steps=${STEPS} ${writes})
run_kmini(again --set rk4.steps=${STEPS} ${writes})
run_kmini(part --set rk4.steps=${half} "--set" "rk4.checkpoint={every: ${half}, path: ckpt.npy}")
run_kmini(resume --set rk4.steps=${STEPS} --set rk4.restart=${OUT}/part/ckpt.npy ${writes})

foreach(run again resume)
  foreach(f delta.npy F.npy G.npy)
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/full/${f} ${OUT}/${run}/${f} RESULT_VARIABLE diff)
    if(NOT diff EQUAL 0)
      message(FATAL_ERROR "${run}/${f} differs from full/${f}")
    endif()
  endforeach()
endforeach()
message("full, again and resume agree bitwise (delta, F, G)")
