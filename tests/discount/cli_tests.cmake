# discount: good runs, bad decks and input files, and rank-count independence.
set(DD ${KMINI_TEST_DATA}/discount)
set(DSMALL --set run.kernels=[discount] --set discount.repeat=2)

kmini_cli_test(cli.discount.example EXIT 0 VERIFIED stream discount FILES results.json cv.npy
               STDOUT "discount +multiply_f64 +100x4000x5.*yes" ARGS inputs/discount.yaml --set stream.repeat=3)
kmini_cli_test(cli.discount.dry_run EXIT 0 STDOUT "discount: D x M x O = 100 x 4000 x 5 \\(double\\)"
               ARGS --dry-run)
kmini_cli_test(cli.discount.files_per_date_single EXIT 0 VERIFIED discount FILES cv.npy sums.npy
               STDOUT "discount +per_date_f32 +5x3x4.*yes" ARGS ${DD}/files_single.yaml)
kmini_cli_test(cli.discount.per_id_no_cv EXIT 0 VERIFIED discount FILES sums.npy
               STDOUT "discount +per_id_f64 +33x101x7.*yes"
               ARGS ${DSMALL} --set discount.dates=33 --set discount.ids=101 --set discount.terms=7
                    --set discount.reduce=per_id "--set=discount.write={reduced: sums.npy}")
kmini_cli_test(cli.discount.flat_policy EXIT 0 VERIFIED discount
               ARGS ${DSMALL} --set discount.policy=flat --set discount.dates=9)

# Bad decks and files: exit 2, one line, nothing allocated or written.
kmini_cli_test(cli.discount.bad.shape EXIT 2
               STDERR "discount.init.mult_by.file: got '.*mult_by_3x4_f8.npy', expected shape \\(4000, 5\\) \\(ids, terms from the deck\\); .* has shape \\(3, 4\\)"
               ARGS ${DSMALL} --set discount.ids=4000 "--set=discount.init.mult_by={file: ${DD}/mult_by_3x4_f8.npy}")
kmini_cli_test(cli.discount.bad.files_disagree EXIT 2
               STDERR "files_disagree.yaml:[0-9]+: discount.init.discount.file: .*expected shape \\(5, 3, 4\\).*has shape \\(5, 3, 3\\)"
               ARGS ${DD}/files_disagree.yaml)
kmini_cli_test(cli.discount.bad.dtype EXIT 2 STDERR "expected an f8 or f4 .npy file; it holds i4"
               ARGS ${DSMALL} "--set=discount.init.mult_by={file: ${DD}/mult_by_3x4_i4.npy}")
kmini_cli_test(cli.discount.bad.memory EXIT 2
               STDERR "huge.yaml:4: discount.dates: needs 71.1 PiB of device memory per rank, the device has [0-9.]+ [KMGTP]?i?B available"
               ARGS ${DD}/huge.yaml)
kmini_cli_test(cli.discount.bad.overflow EXIT 2 STDERR "overflow.yaml:4: discount.dates: .*below 2\\^63 bytes"
               ARGS ${DD}/overflow.yaml)
kmini_cli_test(cli.discount.bad.zero_terms EXIT 2 STDERR "zero_terms.yaml:4: discount.terms: got '0', expected an integer >= 1"
               ARGS ${DD}/zero_terms.yaml)
kmini_cli_test(cli.discount.bad.reduced_without_reduce EXIT 2 STDERR "no reduced output while discount.reduce is none"
               ARGS ${DD}/bad_reduced.yaml)
kmini_cli_test(mpi.cli.discount.bad_shape.np2 NP 2 EXIT 2 STDERR "has shape \\(3, 4\\)"
               ARGS ${DSMALL} --set discount.ids=5 "--set=discount.init.mult_by={file: ${DD}/mult_by_3x4_f8.npy}")

# 1, 2 and 4 ranks (7 dates: uneven slices) write byte-identical cv and per-date sums.
kmini_cli_test(mpi.cli.discount.np@NP@ NP 1 2 4 EXIT 0 VERIFIED discount RANKS @NP@ FILES cv.npy sums.npy
               FIXTURES_SETUP discount_ranks
               ARGS ${DSMALL} --set discount.dates=7 --set discount.ids=301 --set discount.terms=5
                    --set discount.reduce=per_date "--set=discount.write={cv: cv.npy, reduced: sums.npy}")
kmini_compare_outputs(mpi.cli.discount.identical_across_ranks FIXTURE discount_ranks
                      RUNS mpi.cli.discount.np1 mpi.cli.discount.np2 mpi.cli.discount.np4 FILES cv.npy sums.npy)

# NaN/inf in inputs propagate as in numpy (docs/running.md); the check treats NaN as equal to NaN,
# a warning counts them; at 1 and 2 ranks.
kmini_cli_test(cli.discount.nan_inputs_propagate MPI_TWIN mpi.cli.discount.nan_inputs_propagate.np2
               EXIT 0 VERIFIED discount FILES cv.npy sums.npy
               STDERR "warning: discount: the input files hold 0 \\(mult_by\\) and 2 \\(discount\\) NaN or infinite values"
               ARGS ${DD}/files_single.yaml --set discount.precision=double
                    "--set=discount.init.discount={file: ${DD}/discount_5x3x4_nan_f8.npy}")

# discount.stores: streaming (non-temporal) stores of cv give the
# same cv.npy as regular ones; rows of 1505 elements, so each date starts off
# a vector boundary. Streaming exists in host builds for x86 CPUs with AVX.
kmini_cli_test(cli.discount.bad.stores_name EXIT 2
               STDERR "discount.stores: got 'nt', expected one of auto \\| regular \\| streaming"
               ARGS ${DSMALL} --set discount.stores=nt)
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND NOT "CUDA" IN_LIST KMINI_KOKKOS_BACKENDS
   AND (KMINI_NATIVE OR KMINI_ARCH))
  foreach(_stores regular streaming)
    kmini_cli_test(cli.discount.stores.${_stores} EXIT 0 VERIFIED discount FILES cv.npy FIXTURES_SETUP discount_stores
                   ARGS ${DSMALL} --set discount.dates=7 --set discount.ids=301 --set discount.terms=5
                        --set discount.reduce=none --set discount.stores=${_stores} "--set=discount.write={cv: cv.npy}")
  endforeach()
  kmini_compare_outputs(cli.discount.stores.identical_cv FIXTURE discount_stores
                        RUNS cli.discount.stores.regular cli.discount.stores.streaming FILES cv.npy)
  kmini_cli_test(cli.discount.bad.stores_with_reduce EXIT 2
                 STDERR "discount.stores: got 'streaming', expected auto or regular with discount.reduce per_date"
                 ARGS ${DSMALL} --set discount.stores=streaming --set discount.reduce=per_date)
endif()

# discount.policy and discount.loads: every way of running the multiply
# writes the same cv.npy, on every backend (the same products), at 1 and 2
# ranks; rows of 1505 elements, so dates start off a 16-byte boundary, and
# 7 dates: an odd element count, so the packs leave a tail.
foreach(np 0 2)
  set(prefix cli.discount.variants)
  if(np GREATER 0)
    set(prefix mpi.cli.discount.variants.np${np})
  endif()
  set(runs "")
  foreach(precision double single)
    foreach(v mdrange flat wave flat_vector wave_vector)
      string(REPLACE "_" ";" pv ${v})
      list(GET pv 0 policy)
      set(loads scalar)
      if(v MATCHES "vector")
        set(loads vector)
      endif()
      kmini_cli_test(${prefix}.${precision}.${v} NP ${np} EXIT 0 VERIFIED discount FILES cv.npy
                     FIXTURES_SETUP ${prefix}.${precision}
                     ARGS ${DSMALL} --set discount.dates=7 --set discount.ids=301 --set discount.terms=5
                          --set discount.precision=${precision} --set discount.reduce=none
                          --set discount.stores=regular --set discount.policy=${policy} --set discount.loads=${loads}
                          "--set=discount.init.mult_by={random: {seed: 3}}" "--set=discount.init.discount={random: {seed: 4}}"
                          "--set=discount.write={cv: cv.npy}")
    endforeach()
    kmini_compare_outputs(${prefix}.${precision}.identical_cv FIXTURE ${prefix}.${precision} FILES cv.npy
                          RUNS ${prefix}.${precision}.mdrange ${prefix}.${precision}.flat ${prefix}.${precision}.wave
                               ${prefix}.${precision}.flat_vector ${prefix}.${precision}.wave_vector)
  endforeach()
endforeach()
kmini_cli_test(cli.discount.bad.loads_mdrange EXIT 2
               STDERR "discount.loads: got 'vector', expected auto or scalar with discount.policy mdrange"
               ARGS ${DSMALL} --set discount.reduce=none --set discount.policy=mdrange --set discount.loads=vector)
kmini_cli_test(cli.discount.bad.loads_with_reduce EXIT 2
               STDERR "discount.loads: got 'vector', expected auto or scalar with discount.reduce per_date"
               ARGS ${DSMALL} --set discount.policy=flat --set discount.loads=vector --set discount.reduce=per_date)
