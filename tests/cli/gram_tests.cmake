# gram: the bit-packed Gram product through the kmini executable.
set(G ${CMAKE_CURRENT_SOURCE_DIR}/data/gram)

kmini_cli_test(gram.small_deck EXIT 0 VERIFIED gram STDOUT "gram.counts.*yes" ARGS inputs/gram.yaml)
kmini_cli_test(mpi.gram.dry_run_100k.np4 NP 4 EXIT 0
               STDOUT "gram: A 100000 x 200000.*16 row slice\\(s\\) of 6272 rows.*busiest rank 25"
               ARGS inputs/gram_100k.yaml --dry-run)
kmini_cli_test(gram.jaccard_upper EXIT 0 VERIFIED gram FILES J.npy
               ARGS ${G}/A_file.yaml --set gram.similarity=jaccard --set gram.triangle=upper --set gram.write.C=J.npy)
kmini_cli_test(gram.bad.value EXIT 2 STDERR "bad_value.npy: element \\(1, 2\\) is 2 \\(expected 0 or 1\\)"
               ARGS ${G}/A_file.yaml --set gram.A.file=${G}/bad_value.npy)
kmini_cli_test(gram.bad.padding EXIT 2 STDERR "bad_padding.npy: row 1 has 1 bits past column 13"
               ARGS ${G}/A_packed.yaml --set gram.A.file=${G}/bad_padding.npy --set gram.A.cols=13)
kmini_cli_test(gram.bad.packed_cols EXIT 2 STDERR "A_37x130_packed.npy: shape \\(37, 17\\) \\(expected \\(37, 9\\)\\)"
               ARGS ${G}/A_packed.yaml --set gram.A.cols=70)
kmini_cli_test(gram.bad.density EXIT 2 STDERR "gram.A.random.density: got '1.5'"
               ARGS --set run.kernels=[gram] --set gram.A.random.density=1.5)

# The same C whatever the input form (bool, u1, numpy packbits) and rank
# count: byte-identical files.
set(_gram_outputs "")
foreach(form bool u1)
  kmini_cli_test(gram.form.${form} EXIT 0 VERIFIED gram FILES C.npy summary.json
                 ARGS ${G}/A_file.yaml --set gram.A.file=${G}/A_37x130_${form}.npy)
  list(APPEND _gram_outputs gram.form.${form})
endforeach()
kmini_cli_test(gram.form.packed EXIT 0 VERIFIED gram FILES C.npy summary.json ARGS ${G}/A_packed.yaml)
list(APPEND _gram_outputs gram.form.packed)
foreach(np 1 2 3 4)
  kmini_cli_test(mpi.gram.np${np} NP ${np} EXIT 0 VERIFIED gram RANKS ${np} FILES C.npy summary.json
                 ARGS ${G}/A_file.yaml)
  kmini_cli_test(mpi.gram.upper_jaccard.np${np} NP ${np} EXIT 0 VERIFIED gram FILES J.npy
                 ARGS ${G}/A_packed.yaml --set gram.row_slice=4 --set gram.similarity=jaccard
                      --set gram.triangle=upper --set gram.write.C=J.npy)
  kmini_cli_test(mpi.gram.random.np${np} NP ${np} EXIT 0 VERIFIED gram FILES C.npy summary.json
                 ARGS --set run.kernels=[gram] --set gram.A.random.rows=300 --set gram.A.random.cols=257
                      --set gram.row_slice=48 --set gram.write.C=C.npy --set gram.write.summary=summary.json)
  list(APPEND _gram_outputs mpi.gram.np${np})
  set_tests_properties(mpi.gram.np${np} mpi.gram.upper_jaccard.np${np} mpi.gram.random.np${np}
                       PROPERTIES FIXTURES_SETUP gram_outputs)
endforeach()
set_tests_properties(gram.form.bool gram.form.u1 gram.form.packed PROPERTIES FIXTURES_SETUP gram_outputs)

set(W ${KMINI_TEST_WORK})
set(_gram_compare "")
foreach(run IN LISTS _gram_outputs)
  if(NOT run STREQUAL "gram.form.bool")
    list(APPEND _gram_compare ${W}/gram.form.bool/C.npy ${W}/${run}/C.npy ${W}/gram.form.bool/summary.json ${W}/${run}/summary.json)
  endif()
endforeach()
foreach(np 2 3 4)
  list(APPEND _gram_compare ${W}/mpi.gram.upper_jaccard.np1/J.npy ${W}/mpi.gram.upper_jaccard.np${np}/J.npy
                            ${W}/mpi.gram.random.np1/C.npy ${W}/mpi.gram.random.np${np}/C.npy
                            ${W}/mpi.gram.random.np1/summary.json ${W}/mpi.gram.random.np${np}/summary.json)
endforeach()
add_test(NAME mpi.gram.byte_identical
         COMMAND ${CMAKE_COMMAND} "-DPAIRS=${_gram_compare}" -P ${CMAKE_CURRENT_SOURCE_DIR}/cli/compare_pairs.cmake)
set_tests_properties(mpi.gram.byte_identical PROPERTIES FIXTURES_REQUIRED gram_outputs LABELS mpi)
