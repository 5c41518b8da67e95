# CLI tests of the rk4 kernel: decks, outputs, failures, restart, MPI.
set(R ${KMINI_TEST_DATA}/rk4)
set(RK4_SMALL --set run.kernels=[rk4] --set rk4.n=24 --set rk4.steps=60)

kmini_cli_test(rk4.default_section EXIT 0 VERIFIED rk4 STDOUT "rk4 +per_stage_c8.*yes" ARGS --set run.kernels=[rk4])
kmini_cli_test(rk4.double_per_step EXIT 0 VERIFIED rk4 STDOUT "rk4 +per_step_c16"
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
kmini_cli_test(rk4.restart_bitwise MPI_TWIN mpi.cli.rk4.restart_bitwise.np2
               SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/rk4_restart.cmake DEFS -DSTEPS=40
               ARGS --set run.kernels=[rk4] --set rk4.n=20 --set rk4.precision=single
                    "--set" "rk4.init.G={random: {seed: 2, scale: 0.5}}")
kmini_cli_test(rk4.bad.restart_mismatch EXIT 2 STDERR "checkpoint has n = 20, the deck has 24" DEPENDS rk4.restart_bitwise
               ARGS ${RK4_SMALL} --set rk4.restart=${KMINI_TEST_WORK}/rk4.restart_bitwise/part/ckpt.npy)

# Damaged checkpoints: a good checkpoint (n = 20, step 20), then one
# restart per damage, with verify on and off and at 2 ranks: exit 2 and one
# line naming the file and what does not match. checkpoint_tamper.cpp
# makes the damaged copies; "resealed" ones carry a matching checksum, so the
# checks behind it (header values, sums re-derived from the fields) must catch them.
add_executable(kmini_checkpoint_tamper checkpoint_tamper.cpp)
target_link_libraries(kmini_checkpoint_tamper PRIVATE kmini_lib)
set(CKPT_ARGS --set run.kernels=[rk4] --set rk4.n=20 --set rk4.precision=single
              "--set" "rk4.init.G={random: {seed: 2, scale: 0.5}}")
set(CKPT ${KMINI_TEST_WORK}/rk4.checkpoint.write/ckpt.npy)
kmini_cli_test(rk4.checkpoint.write EXIT 0 FILES ckpt.npy FIXTURES_SETUP rk4_checkpoint
               ARGS ${CKPT_ARGS} --set rk4.steps=20 "--set" "rk4.checkpoint={every: 20, path: ckpt.npy}")
# The control: the undamaged checkpoint restarts and verifies.
kmini_cli_test(rk4.checkpoint.restart_ok EXIT 0 VERIFIED rk4 STDOUT "restart from step 20" FIXTURES_REQUIRED rk4_checkpoint
               ARGS ${CKPT_ARGS} --set rk4.steps=40 --set rk4.restart=${CKPT})

function(rk4_bad_checkpoint case edit reseal regex)
  foreach(variant verify noverify np2)
    set(name rk4.bad.checkpoint.${case}.${variant})
    set(np 0)
    set(extra --set run.verify=true)
    if(variant STREQUAL "noverify")
      set(extra --set run.verify=false)
    elseif(variant STREQUAL "np2")
      set(name mpi.cli.rk4.bad.checkpoint.${case}.np2)
      set(np 2)
    endif()
    kmini_cli_test(${name} NP ${np} EXIT 2 STDERR "kmini: error: --set rk4.restart=[-a-zA-Z0-9_./]*\\.ckpt\\.npy: rk4.restart: [-a-zA-Z0-9_./]*\\.ckpt\\.npy: ${regex}"
                   SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/rk4_bad_checkpoint.cmake FIXTURES_REQUIRED rk4_checkpoint
                   DEFS -DTAMPER=$<TARGET_FILE:kmini_checkpoint_tamper> -DCHECKPOINT=${CKPT} "-DEDIT=${edit}"
                        -DRESEAL=${reseal}
                   ARGS ${CKPT_ARGS} --set rk4.steps=40 --set rk4.write.delta=delta.csv ${extra})
  endforeach()
endfunction()
set(mismatch "checkpoint is corrupt: checksum mismatch \\(stored 0x[0-9a-f]+, computed 0x[0-9a-f]+\\)")
rk4_bad_checkpoint(sum_last_bit "flip:sum_re_f" 0 "${mismatch}")
rk4_bad_checkpoint(field_element "set:F.7=0.25" 0 "${mismatch}")
rk4_bad_checkpoint(history_row "add:delta.3=1e-3" 0 "${mismatch}")
rk4_bad_checkpoint(nan_sum "set:sum_im_f=nan" 0 "${mismatch}")
rk4_bad_checkpoint(flag "set:flag=2" 0 "${mismatch}")
rk4_bad_checkpoint(checksum_slot "flip:@3" 0
                   "checkpoint is corrupt: checksum mismatch \\(stored \\([0-9]+, [0-9.]+\\) is not a checksum, computed 0x")
rk4_bad_checkpoint(nan_sum_resealed "set:sum_im_f=nan" 1 "checkpoint is corrupt: stored sum Im F is not finite \\(nan\\)")
rk4_bad_checkpoint(inf_dt_resealed "set:dt=inf" 1 "checkpoint is corrupt: stored dt is not finite \\(inf\\)")
rk4_bad_checkpoint(flag_resealed "set:flag=2" 1 "checkpoint is corrupt: coupling flag is 2, expected 0 or 1")
rk4_bad_checkpoint(precision_resealed "set:precision=12" 1 "checkpoint is corrupt: precision field is 12, expected 8 or 16")
rk4_bad_checkpoint(history_resealed "set:delta.3=nan" 1 "checkpoint is corrupt: stored delta\\[3\\] is not finite")
rk4_bad_checkpoint(sum_resealed "add:sum_re_g=1e-6" 1
                   "checkpoint is corrupt: stored sum Re G = [-0-9.e]+ does not match the fields \\(their sum is [-0-9.e]+, rounding allows [0-9.e-]+\\)")
rk4_bad_checkpoint(field_resealed "add:F.7=0.25" 1
                   "checkpoint is corrupt: stored sum Re F = [-0-9.e]+ does not match the fields \\(their sum is")
rk4_bad_checkpoint(n "set:n=21" 0
                   "checkpoint is corrupt: shape \\(427, 2\\) does not match n = 21 and step = 20 in its header \\(expected \\(468, 2\\)\\)")
rk4_bad_checkpoint(version1 version1 0
                   "checkpoint format version 1 has no integrity check \\(written by kmini < [0-9.]+\\); restart from the start or from a checkpoint written by this kmini")
rk4_bad_checkpoint(version3 "set:version=3" 0 "checkpoint format version 3 is not supported \\(this kmini reads version 2\\)")

kmini_cli_test(mpi.cli.rk4.np@NP@ NP 1 2 4 EXIT 0 VERIFIED rk4 RANKS @NP@ FILES delta.npy F.npy G.npy
               ARGS ${RK4_SMALL} --set rk4.n=37 --set rk4.write.delta=delta.npy --set rk4.write.F=F.npy --set rk4.write.G=G.npy)
kmini_cli_test(mpi.cli.rk4.original_np2 NP 2 EXIT 1 STDERR "non-finite at step" ARGS inputs/rk4_original.yaml)

# Models and methods: method stages for both models, verified
# against the host reference in the run; bad keys; restart bitwise with stages.
kmini_cli_test(rk4.stages.linear EXIT 0 VERIFIED rk4 STDOUT "rk4 +per_stage_stages_c8.*yes"
               ARGS ${RK4_SMALL} --set rk4.method=stages)
kmini_cli_test(rk4.stages.kerr_per_stage EXIT 0 VERIFIED rk4 STDOUT "method stages, kerr = 0.8.*rk4 +per_stage_stages_kerr_c8.*yes"
               ARGS ${RK4_SMALL} --set rk4.kerr=0.8)
kmini_cli_test(rk4.stages.kerr_per_step_double EXIT 0 VERIFIED rk4 STDOUT "rk4 +per_step_stages_kerr_c16.*yes"
               ARGS ${RK4_SMALL} --set rk4.kerr=-1.5 --set rk4.coupling=per_step --set rk4.precision=double
                    --set rk4.method=stages --set rk4.delta0=[0.3,0.1])
kmini_cli_test(rk4.stages.original_blows_up EXIT 1 STDERR "non-finite at step [0-9]+"
               ARGS inputs/rk4_original.yaml --set rk4.method=stages)
kmini_cli_test(rk4.bad.method EXIT 2 STDERR "rk4.method: got 'rk5', expected one of auto \\| affine \\| stages"
               ARGS ${RK4_SMALL} --set rk4.method=rk5)
kmini_cli_test(rk4.bad.method_affine_nonlinear EXIT 2
               STDERR "rk4.method: got 'affine', expected auto or stages \\(rk4.kerr = 0.5 makes the model nonlinear; affine needs a linear model, kerr = 0\\)"
               ARGS ${RK4_SMALL} --set rk4.kerr=0.5 --set rk4.method=affine)
kmini_cli_test(rk4.bad.kerr EXIT 2 STDERR "rk4.kerr: got 'strong'" ARGS ${RK4_SMALL} --set rk4.kerr=strong)
foreach(coupling per_step per_stage)
  kmini_cli_test(rk4.stages.restart_bitwise.kerr_${coupling} MPI_TWIN mpi.cli.rk4.stages.restart_bitwise.kerr_${coupling}.np2
                 SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/rk4_restart.cmake DEFS -DSTEPS=40
                 ARGS --set run.kernels=[rk4] --set rk4.n=20 --set rk4.precision=single --set rk4.kerr=0.6
                      --set rk4.coupling=${coupling} --set rk4.delta0=[0.2,0.1]
                      "--set" "rk4.init.G={random: {seed: 2, scale: 0.5}}")
endforeach()
# delta from per-stage sums of aligned fields (|sum F| = sum |F|) in double on
# 2 and 3 ranks: the verification must allow the two sides' summation orders.
kmini_cli_test(mpi.cli.rk4.stages.kerr_per_stage_double.np@NP@ NP 2 3 EXIT 0 VERIFIED rk4 RANKS @NP@
               ARGS --set run.kernels=[rk4] --set rk4.n=64 --set rk4.steps=20 --set rk4.method=stages
                    --set rk4.kerr=0.3 --set rk4.precision=double "--set" "rk4.init.F={fill: [1.0, 0.0]}")
# A restart must continue the same model and method.
kmini_cli_test(rk4.bad.restart_kerr_mismatch EXIT 2 STDERR "checkpoint has kerr = 0, the deck has 0.5"
               DEPENDS rk4.restart_bitwise
               ARGS --set run.kernels=[rk4] --set rk4.n=20 --set rk4.steps=60 --set rk4.kerr=0.5
                    --set rk4.restart=${KMINI_TEST_WORK}/rk4.restart_bitwise/part/ckpt.npy)
kmini_cli_test(rk4.bad.restart_method_mismatch EXIT 2 STDERR "checkpoint has method = affine, the deck has stages"
               DEPENDS rk4.restart_bitwise
               ARGS --set run.kernels=[rk4] --set rk4.n=20 --set rk4.steps=60 --set rk4.method=stages
                    --set rk4.restart=${KMINI_TEST_WORK}/rk4.restart_bitwise/part/ckpt.npy)

# rk4.chunk (elements per work item of the affine step): every width verifies,
# on 1 and 2 ranks with an element count that is no multiple of 4 or 64.
foreach(_chunk 1 4 auto)
  kmini_cli_test(rk4.chunk_${_chunk} EXIT 0 VERIFIED rk4
                 ARGS --set run.kernels=[rk4] --set rk4.n=37 --set rk4.steps=20 --set rk4.chunk=${_chunk})
  kmini_cli_test(mpi.rk4.chunk_${_chunk}.np2 NP 2 EXIT 0 VERIFIED rk4
                 ARGS --set run.kernels=[rk4] --set rk4.n=37 --set rk4.steps=20 --set rk4.coupling=per_step
                      --set rk4.chunk=${_chunk})
endforeach()
kmini_cli_test(rk4.bad.chunk EXIT 2 STDERR "rk4.chunk: got '3', expected one of auto \\| 1 \\| 4"
               ARGS --set run.kernels=[rk4] --set rk4.chunk=3)

# rk4.occupancy: full (the step and stage kernels with launch bounds for full
# occupancy on GPUs; hosts ignore them): verifies with both methods, both
# couplings and the Kerr model, on 1 and 2 ranks.
foreach(_case "affine;per_step" "stages;per_stage" "stages;per_step")
  list(GET _case 0 _method)
  list(GET _case 1 _coupling)
  kmini_cli_test(rk4.occupancy_full.${_method}.${_coupling} MPI_TWIN mpi.rk4.occupancy_full.${_method}.${_coupling}.np2
                 EXIT 0 VERIFIED rk4
                 ARGS --set run.kernels=[rk4] --set rk4.n=37 --set rk4.steps=20 --set rk4.occupancy=full
                      --set rk4.method=${_method} --set rk4.coupling=${_coupling})
endforeach()
kmini_cli_test(rk4.occupancy_full.kerr EXIT 0 VERIFIED rk4
               ARGS --set run.kernels=[rk4] --set rk4.n=37 --set rk4.steps=20 --set rk4.occupancy=full
                    --set rk4.kerr=0.5)
kmini_cli_test(rk4.bad.occupancy EXIT 2 STDERR "rk4.occupancy: got 'half', expected one of auto \\| full"
               ARGS --set run.kernels=[rk4] --set rk4.occupancy=half)

# The step kernels' variants (rk4.grid, rk4.loads, rk4.chunk), at 1 and 2 ranks:
# every run verified against the host reference (delta and fields within its
# tolerance). On Serial (one thread: the wave is one thread looping over the
# default grid's work items in order) grid wave is bitwise the default grid,
# and 16-byte packs bitwise the same chunk loaded element by element (single:
# chunk 4): delta.npy, F.npy, G.npy compared byte for byte.
set(RK4_VARIANT_OUT "--set=rk4.write={delta: delta.npy, F: F.npy, G: G.npy}")
set(RK4_VARIANTS_affine --set rk4.coupling=per_step --set rk4.delta0=[0.5,0.1])
set(RK4_VARIANTS_stages --set rk4.method=stages --set rk4.kerr=0.7)
set(rk4_variant_default "")
set(rk4_variant_items --set rk4.grid=items --set rk4.loads=scalar)
set(rk4_variant_wave --set rk4.grid=wave)
set(rk4_variant_chunk4 --set rk4.chunk=4)
set(rk4_variant_vector --set rk4.loads=vector)
set(rk4_variant_wave_vector --set rk4.grid=wave --set rk4.loads=vector)
set(rk4_variant_wave_full --set rk4.grid=wave --set rk4.occupancy=full)
foreach(np 0 2)
  foreach(method affine stages)
    set(prefix rk4.variants.${method})
    if(np GREATER 0)
      set(prefix mpi.cli.rk4.variants.${method}.np${np})
    endif()
    set(variants default items wave vector wave_vector wave_full)
    if(method STREQUAL "affine")
      list(APPEND variants chunk4)
    endif()
    foreach(v IN LISTS variants)
      kmini_cli_test(${prefix}.${v} NP ${np} EXIT 0 VERIFIED rk4 FILES delta.npy F.npy G.npy FIXTURES_SETUP ${prefix}
                     ARGS --set run.kernels=[rk4] --set rk4.n=23 --set rk4.steps=40 --set rk4.dt=0.01
                          "--set" "rk4.init.F={random: {seed: 5, scale: 1.0}}"
                          "--set" "rk4.init.G={random: {seed: 6, scale: 0.5}}"
                          ${RK4_VARIANTS_${method}} ${rk4_variant_${v}} ${RK4_VARIANT_OUT})
    endforeach()
    if(KMINI_TEST_BACKEND STREQUAL "serial")
      set(same_bits "default;items;wave;wave_full")
      set(packed "vector;wave_vector")
      if(method STREQUAL "affine")
        list(PREPEND packed chunk4)  # single precision: a pack is chunk 4
      endif()
      foreach(group same_bits packed)
        set(runs "")
        foreach(v IN LISTS ${group})
          list(APPEND runs ${prefix}.${v})
        endforeach()
        kmini_compare_outputs(${prefix}.identical_${group} RUNS ${runs} FILES delta.npy F.npy G.npy FIXTURE ${prefix})
      endforeach()
    endif()
  endforeach()
endforeach()
kmini_cli_test(rk4.bad.loads_with_chunk EXIT 2
               STDERR "rk4.chunk: got '4', expected auto with rk4.loads: vector"
               ARGS ${RK4_SMALL} --set rk4.loads=vector --set rk4.chunk=4)
kmini_cli_test(rk4.bad.grid EXIT 2 STDERR "rk4.grid: got 'waves', expected one of auto \\| items \\| wave"
               ARGS ${RK4_SMALL} --set rk4.grid=waves)
