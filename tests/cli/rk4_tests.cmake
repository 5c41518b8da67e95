# CLI tests of the rk4 kernel: decks, outputs, failures, restart, MPI.
set(R ${CMAKE_CURRENT_SOURCE_DIR}/data/rk4)
set(RK4_SMALL --set run.kernels=[rk4] --set rk4.n=24 --set rk4.steps=60)

kmini_cli_test(rk4.default_section EXIT 0 VERIFIED rk4 STDOUT "rk4.per_stage_c8.*yes" ARGS --set run.kernels=[rk4])
kmini_cli_test(rk4.double_per_step EXIT 0 VERIFIED rk4 STDOUT "rk4.per_step_c16"
               ARGS ${RK4_SMALL} --set rk4.precision=double --set rk4.coupling=per_step)
kmini_cli_test(rk4.deck EXIT 0 VERIFIED rk4 FILES delta.csv F.npy G.npy rk4_checkpoint.npy
               STDOUT "rk4: step 400/400 .*invariant drift"
               ARGS inputs/rk4.yaml --set rk4.n=64 --set rk4.steps=400 --set rk4.progress.every=200
                    --set rk4.checkpoint.every=200)
kmini_cli_test(rk4.bench_deck_parses EXIT 0 STDOUT "rk4: n = 1024.*per_step, single" ARGS inputs/bench/rk4.yaml --dry-run)
kmini_cli_test(rk4.delta0_ignored_warning EXIT 0 STDERR "rk4.delta0 is ignored with coupling per_stage"
               ARGS ${RK4_SMALL} --set rk4.delta0=[1,0])

# The original formulation blows up: exit 1 naming the step and the last finite delta; delta.csv kept.
kmini_cli_test(rk4.original_blows_up EXIT 1 FILES delta.csv
               STDERR "non-finite at step [0-9]+ \\(t = [^)]*\\); last finite delta\\[[0-9]+\\] = \\(.*delta.csv holds"
               ARGS inputs/rk4_original.yaml)

# Bad decks: exit 2, one line naming file, key and value.
kmini_cli_test(rk4.bad.n EXIT 2 STDERR "bad_n.yaml:4: rk4.n: got '0', expected an integer in" ARGS ${R}/bad_n.yaml)
kmini_cli_test(rk4.bad.dt EXIT 2 STDERR "bad_dt.yaml:5: rk4.dt: got '0', expected a finite number > 0" ARGS ${R}/bad_dt.yaml)
kmini_cli_test(rk4.bad.negative_dt EXIT 2 STDERR "negative_dt.yaml:5: rk4.dt: got '-1.0e-3'" ARGS ${R}/negative_dt.yaml)
kmini_cli_test(rk4.bad.coupling EXIT 2
               STDERR "bad_coupling.yaml:5: rk4.coupling: got 'per_substep', expected one of per_step \\| per_stage"
               ARGS ${R}/bad_coupling.yaml)
kmini_cli_test(rk4.bad.file_shape EXIT 2
               STDERR "wrong_shape.yaml:6: rk4.init.F.file: tests/data/npy/c8_2x2.npy: shape \\(2, 2\\) \\(expected \\(3, 3\\)\\)"
               ARGS ${R}/wrong_shape.yaml)
kmini_cli_test(rk4.bad.file_dtype EXIT 2
               STDERR "wrong_dtype.yaml:6: rk4.init.G.file: tests/data/npy/f8_3x4.npy: dtype f8 \\(expected c8 or c16\\)"
               ARGS ${R}/wrong_dtype.yaml)
kmini_cli_test(rk4.bad.two_inits EXIT 2 STDERR "rk4.init.F: got fill, random, expected exactly one of fill \\| file \\| random"
               ARGS ${R}/two_inits.yaml)
kmini_cli_test(rk4.bad.delta_path EXIT 2 STDERR "rk4.write.delta: got 'delta.txt', expected a path ending in .npy or .csv"
               ARGS ${R}/bad_delta_path.yaml)
kmini_cli_test(rk4.bad.restart_not_checkpoint EXIT 2 STDERR "c8_2x2.npy: dtype c8 \\(expected c16\\)"
               ARGS ${RK4_SMALL} --set rk4.restart=tests/data/npy/c8_2x2.npy)

# Restart and reproducibility: bitwise, on 1 rank and under MPI.
foreach(np 0 2)
  set(name rk4.restart_bitwise)
  if(np GREATER 0)
    set(name mpi.cli.rk4.restart_bitwise.np${np})
  endif()
  kmini_cli_test(${name} NP ${np} SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/cli/rk4_restart.cmake DEFS -DSTEPS=40
                 ARGS --set run.kernels=[rk4] --set rk4.n=20 --set rk4.precision=single
                      "--set" "rk4.init.G={random: {seed: 2, scale: 0.5}}")
endforeach()
kmini_cli_test(rk4.bad.restart_mismatch EXIT 2 STDERR "checkpoint has n = 20, the deck has 24"
               ARGS ${RK4_SMALL} --set rk4.restart=${KMINI_TEST_WORK}/rk4.restart_bitwise/part/ckpt.npy)
set_tests_properties(rk4.bad.restart_mismatch PROPERTIES DEPENDS rk4.restart_bitwise)

foreach(np 1 2 4)
  kmini_cli_test(mpi.cli.rk4.np${np} NP ${np} EXIT 0 VERIFIED rk4 RANKS ${np} FILES delta.npy F.npy G.npy
                 ARGS ${RK4_SMALL} --set rk4.n=37 --set rk4.write.delta=delta.npy --set rk4.write.F=F.npy --set rk4.write.G=G.npy)
endforeach()
kmini_cli_test(mpi.cli.rk4.original_np2 NP 2 EXIT 1 STDERR "non-finite at step" ARGS inputs/rk4_original.yaml)
