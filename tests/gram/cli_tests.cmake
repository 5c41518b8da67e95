# gram: the bit-packed Gram product through the kmini executable.
# The sparse outputs' minimum (_min) and count_at_least thresholds (_thresholds)
# of a similarity kind: counts are integers, the similarities in [0, 1].
macro(kmini_gram_sparse_limits kind)
  if("${kind}" STREQUAL "counts")
    set(_min 5)
    set(_thresholds "[5, 0, 10, 3]")
  else()
    set(_min 0.25)
    set(_thresholds "[0.25, 0, 0.5, 1]")
  endif()
endmacro()

set(G ${KMINI_TEST_DATA}/gram)

kmini_cli_test(gram.small_deck EXIT 0 VERIFIED gram STDOUT "gram +counts.*yes" ARGS inputs/gram.yaml)
kmini_cli_test(mpi.gram.dry_run_100k.np4 NP 4 EXIT 0
               STDOUT "gram: A 100000 x 200000.*top-k lists [0-9.]+ GiB; 16 row slice\\(s\\) of 6272 rows in 4 round\\(s\\).*device memory per rank [0-9.]+ GiB of budget 59.6 GiB.*busiest rank 25.*write.top_k gram_100k_top16.npy: 100000 x 16 partners, 0.0179 GiB"
               ARGS inputs/gram_100k.yaml --dry-run)
kmini_cli_test(gram.jaccard_upper EXIT 0 VERIFIED gram FILES J.npy
               ARGS ${G}/A_file.yaml --set gram.similarity=jaccard --set gram.triangle=upper --set gram.write.C=J.npy)
kmini_cli_test(gram.bad.value EXIT 2 STDERR "bad_value.npy: element \\(1, 2\\) is 2 \\(expected 0 or 1\\)"
               ARGS ${G}/A_file.yaml --set gram.A.file=${G}/bad_value.npy)
# A is read once over the ranks (each rank its own rows): a bad value in the last
# rank's rows is the same one-line error on every rank; the plan shows the read.
kmini_cli_test(mpi.gram.bad.value_late_row.np@NP@ NP 2 3 EXIT 2
               STDERR "bad_value_row30.npy: element \\(30, 5\\) is 2 \\(expected 0 or 1\\)"
               ARGS ${G}/A_file.yaml --set gram.A.file=${G}/bad_value_row30.npy)
kmini_cli_test(mpi.gram.form.packed.np3 NP 3 EXIT 0 VERIFIED gram RANKS 3 ARGS ${G}/A_packed.yaml)
kmini_cli_test(mpi.gram.dry_run_read.np3 NP 3 EXIT 0
               STDOUT "read A: 4.7[0-9]* KiB from .*A_37x130_bool.npy, at most 1.6[0-9]* KiB per rank \\(rows split over 3 rank\\(s\\), pread\\), then packed rows allgathered"
               ARGS ${G}/A_file.yaml --dry-run)
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
  kmini_cli_test(gram.form.${form} EXIT 0 VERIFIED gram FILES C.npy summary.json FIXTURES_SETUP gram_outputs
                 ARGS ${G}/A_file.yaml --set gram.A.file=${G}/A_37x130_${form}.npy)
  list(APPEND _gram_outputs gram.form.${form})
endforeach()
kmini_cli_test(gram.form.packed EXIT 0 VERIFIED gram FILES C.npy summary.json FIXTURES_SETUP gram_outputs
               ARGS ${G}/A_packed.yaml)
list(APPEND _gram_outputs gram.form.packed)
foreach(np 1 2 3 4)
  kmini_cli_test(mpi.gram.np${np} NP ${np} EXIT 0 VERIFIED gram RANKS ${np} FILES C.npy summary.json
                 FIXTURES_SETUP gram_outputs ARGS ${G}/A_file.yaml)
  kmini_cli_test(mpi.gram.upper_jaccard.np${np} NP ${np} EXIT 0 VERIFIED gram FILES J.npy FIXTURES_SETUP gram_outputs
                 ARGS ${G}/A_packed.yaml --set gram.row_slice=4 --set gram.similarity=jaccard
                      --set gram.triangle=upper --set gram.write.C=J.npy)
  kmini_cli_test(mpi.gram.random.np${np} NP ${np} EXIT 0 VERIFIED gram FILES C.npy summary.json FIXTURES_SETUP gram_outputs
                 ARGS --set run.kernels=[gram] --set gram.A.random.rows=300 --set gram.A.random.cols=257
                      --set gram.row_slice=48 --set gram.write.C=C.npy --set gram.write.summary=summary.json)
  list(APPEND _gram_outputs mpi.gram.np${np})
endforeach()

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
kmini_compare_pairs(mpi.gram.byte_identical PAIRS ${_gram_compare} FIXTURES gram_outputs)

# Sparse outputs (write.pairs, write.top_k, count_at_least) and dense
# similarities on a matrix with ties and empty rows, one input and two
# (A B^T with rows(A) != rows(B)): against numpy (check_gram_sparse.py,
# skipped when the python has no numpy) and byte-identical on 1, 2, 3 and 4 ranks.
set(_sparse_compare "")
foreach(input a ab)
  set(_b_args "")
  set(_b_check "")
  if(input STREQUAL "ab")
    set(_b_args --set "gram.B={file: ${G}/B_23x70_u1.npy}")
    set(_b_check --b ${G}/B_23x70_u1.npy)
  endif()
  foreach(kind counts jaccard dice cosine)
    kmini_gram_sparse_limits(${kind})
    # Every kind on 1 rank; counts and cosine on 2, 3, 4 ranks too.
    set(_nps 1)
    if(kind STREQUAL "counts" OR kind STREQUAL "cosine")
      set(_nps 1 2 3 4)
    endif()
    foreach(np IN LISTS _nps)
      set(_run mpi.gram.sparse.${input}.${kind}.np${np})
      kmini_cli_test(${_run} NP ${np} EXIT 0 VERIFIED gram FILES C.npy pairs.npy top.npy summary.json
                     FIXTURES_SETUP gram_sparse_outputs
                     ARGS ${G}/sparse.yaml ${_b_args} --set gram.similarity=${kind} --set gram.write.pairs.min=${_min}
                          --set "gram.write.count_at_least=${_thresholds}")
      if(np GREATER 1)
        foreach(f C.npy pairs.npy top.npy summary.json)
          list(APPEND _sparse_compare ${W}/mpi.gram.sparse.${input}.${kind}.np1/${f} ${W}/${_run}/${f})
        endforeach()
      endif()
    endforeach()
    kmini_test(gram.sparse.${input}.${kind}.numpy
               COMMAND ${KMINI_NUMPY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_gram_sparse.py
                       --dir ${W}/mpi.gram.sparse.${input}.${kind}.np1 --a ${G}/A_41x70_ties.npy ${_b_check}
                       --kind ${kind} --min ${_min} --k 6
               FIXTURES_REQUIRED gram_sparse_outputs SKIP_RETURN_CODE 77 LABELS cli)
  endforeach()
endforeach()
# Tversky with unequal weights (asymmetric: A against B), against numpy, the same bytes on 2 ranks.
foreach(np 1 2)
  kmini_cli_test(mpi.gram.sparse.ab.tversky.np${np} NP ${np} EXIT 0 VERIFIED gram
                 FILES C.npy pairs.npy top.npy summary.json FIXTURES_SETUP gram_sparse_outputs
                 ARGS ${G}/sparse.yaml --set "gram.B={file: ${G}/B_23x70_u1.npy}" --set gram.similarity=tversky
                      --set "gram.tversky={alpha: 0.9, beta: 0.1}" --set gram.write.pairs.min=0.4
                      --set "gram.write.count_at_least=[0.4, 0, 0.7, 1]")
endforeach()
foreach(f C.npy pairs.npy top.npy summary.json)
  list(APPEND _sparse_compare ${W}/mpi.gram.sparse.ab.tversky.np1/${f} ${W}/mpi.gram.sparse.ab.tversky.np2/${f})
endforeach()
kmini_test(gram.sparse.ab.tversky.numpy
           COMMAND ${KMINI_NUMPY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_gram_sparse.py
                   --dir ${W}/mpi.gram.sparse.ab.tversky.np1 --a ${G}/A_41x70_ties.npy --b ${G}/B_23x70_u1.npy
                   --kind tversky --tversky 0.9 0.1 --min 0.4 --k 6
           FIXTURES_REQUIRED gram_sparse_outputs SKIP_RETURN_CODE 77 LABELS cli)
kmini_compare_pairs(mpi.gram.sparse.byte_identical PAIRS ${_sparse_compare} FIXTURES gram_sparse_outputs)

# gram.tversky: both weights, with similarity tversky only, not both 0, equal with one input.
# Bad settings: exit 2, one line naming the key.
set(_small --set run.kernels=[gram] --set gram.A.random.rows=30 --set gram.A.random.cols=50)
kmini_cli_test(gram.bad.tversky_missing EXIT 2
               STDERR "gram.tversky: missing, expected \\{alpha: ..., beta: ...\\}, the weights of similarity tversky"
               ARGS ${_small} --set gram.similarity=tversky)
kmini_cli_test(gram.bad.tversky_without_tversky EXIT 2
               STDERR "gram.tversky: got '\\{alpha: 1, beta: 1\\}', expected no gram.tversky with similarity jaccard"
               ARGS ${_small} --set gram.similarity=jaccard --set "gram.tversky={alpha: 1, beta: 1}")
kmini_cli_test(gram.bad.tversky_beta_missing EXIT 2 STDERR "gram.tversky.beta: missing, expected a number"
               ARGS ${_small} --set gram.similarity=tversky --set "gram.tversky={alpha: 1}")
kmini_cli_test(gram.bad.tversky_zero_weights EXIT 2
               STDERR "gram.tversky.alpha: got '0', expected weights alpha \\+ beta > 0"
               ARGS ${_small} --set gram.similarity=tversky --set "gram.tversky={alpha: 0, beta: 0}")
kmini_cli_test(gram.bad.tversky_asymmetric_one_input EXIT 2
               STDERR "gram.tversky.beta: got '0.2', expected alpha == beta with one input .*give the targets as B"
               ARGS ${_small} --set gram.similarity=tversky --set "gram.tversky={alpha: 0.8, beta: 0.2}")

# chemfp's simsearch format lists similarities (the file against the lists: gram.fps).
kmini_cli_test(gram.bad.simsearch_counts EXIT 2
               STDERR "gram.write.top_k.simsearch: got 'hits.txt', expected no simsearch file with similarity counts"
               ARGS ${_small} --set "gram.write.top_k={path: t.npy, k: 3, simsearch: hits.txt}")

# gram.exclude_self: with B, both FPS files (the runs against numpy: gram.fps).
kmini_cli_test(gram.bad.exclude_self_one_input EXIT 2
               STDERR "gram.exclude_self: got 'true', expected false without gram.B"
               ARGS ${_small} --set gram.exclude_self=true)
kmini_cli_test(gram.bad.exclude_self_without_ids EXIT 2
               STDERR "gram.exclude_self: got 'true', expected false, or FPS files as gram.A and gram.B"
               ARGS ${_small} --set "gram.B.random={rows: 20, cols: 50}" --set gram.exclude_self=true)

# gram.prune: queries against targets whose every output has a minimum above 0
# (the searches against numpy and unpruned runs: gram.prune).
set(_small_ab ${_small} --set gram.B.random.rows=20 --set gram.B.random.cols=50)
kmini_cli_test(gram.bad.prune_one_input EXIT 2
               STDERR "gram.prune: got 'true', expected false without gram.B"
               ARGS ${_small} --set gram.prune=true --set "gram.write.pairs={path: p.npy, min: 2}")
kmini_cli_test(gram.bad.prune_dense_c EXIT 2
               STDERR "gram.prune: got 'true', expected false with write.C or write.summary"
               ARGS ${_small_ab} --set gram.prune=true --set "gram.write.pairs={path: p.npy, min: 2}"
                    --set gram.write.C=C.npy)
kmini_cli_test(gram.bad.prune_no_output EXIT 2
               STDERR "gram.prune: got 'true', expected false without write.pairs, write.top_k or write.count_at_least"
               ARGS ${_small_ab} --set gram.prune=true)
kmini_cli_test(gram.bad.prune_no_minimum EXIT 2
               STDERR "gram.prune: got 'true', expected false unless write.pairs.min, write.top_k.min"
               ARGS ${_small_ab} --set gram.prune=true --set "gram.write.top_k={path: t.npy, k: 3}")
kmini_cli_test(gram.bad.prune_ring EXIT 2
               STDERR "gram.prune: got 'true', expected false with distribution ring"
               ARGS ${_small_ab} --set gram.prune=true --set "gram.write.pairs={path: p.npy, min: 2}"
                    --set gram.distribution=ring)

# The PyTorch peer's numpy parts (benchmarks/peers.py: padding, Jaccard,
# pairs, the tie-aware top-k comparison) against kmini's outputs.
kmini_test(gram.torch_peer_numpy_parts
           COMMAND ${KMINI_NUMPY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_torch_peer.py $<TARGET_FILE:kmini>
           SKIP_RETURN_CODE 77 LABELS cli ENVIRONMENT ${KMINI_MPI_ENV})

# Bad sparse-output and B settings: exit 2, one line naming the key.
kmini_cli_test(gram.bad.top_k_negative EXIT 2
               STDERR "gram.write.top_k.k: got '-1', expected an integer in \\[1, 29\\]"
               ARGS ${_small} --set "gram.write.top_k={path: t.npy, k: -1}")
kmini_cli_test(gram.bad.top_k_above_rows EXIT 2
               STDERR "gram.write.top_k.k: got '30', expected an integer in \\[1, 29\\]"
               ARGS ${_small} --set "gram.write.top_k={path: t.npy, k: 30}")
kmini_cli_test(gram.bad.top_k_above_targets EXIT 2
               STDERR "gram.write.top_k.k: got '21', expected an integer in \\[1, 20\\]"
               ARGS ${_small} --set "gram.B.random={rows: 20, cols: 50}" --set "gram.write.top_k={path: t.npy, k: 21}")
kmini_cli_test(gram.bad.pairs_min EXIT 2
               STDERR "gram.write.pairs.min: got 'abc', expected a finite number >= 0"
               ARGS ${_small} --set "gram.write.pairs={path: p.npy, min: abc}")
kmini_cli_test(gram.bad.pairs_min_missing EXIT 2 STDERR "gram.write.pairs.min: missing, expected a number"
               ARGS ${_small} --set "gram.write.pairs={path: p.npy}")
kmini_cli_test(gram.bad.similarity EXIT 2
               STDERR "gram.similarity: got 'hamming', expected one of counts \\| jaccard \\| dice \\| cosine \\| tversky \\| tanimoto"
               ARGS ${_small} --set gram.similarity=hamming)
kmini_cli_test(gram.bad.count_at_least EXIT 2
               STDERR "gram.write.count_at_least: got '\\[0.5, x\\]', expected a list of at most 64 finite numbers >= 0"
               ARGS ${_small} --set "gram.write.count_at_least=[0.5, x]")
kmini_cli_test(gram.bad.b_cols EXIT 2
               STDERR "gram.B.random.cols: 49 columns in gram.B, expected the 50 columns of gram.A \\(--set gram.A.random.cols=50: gram.A.random.cols\\)"
               ARGS ${_small} --set "gram.B.random={rows: 20, cols: 49}")
kmini_cli_test(gram.bad.b_file_cols EXIT 2
               STDERR "gram.B.file: 130 columns in gram.B, expected the 70 columns of gram.A \\(.*sparse.yaml:6: gram.A.file\\)"
               ARGS ${G}/sparse.yaml --set "gram.B={file: ${G}/A_37x130_bool.npy}")
kmini_cli_test(gram.bad.b_upper EXIT 2 STDERR "gram.triangle: got 'upper', expected full with gram.B"
               ARGS ${_small} --set "gram.B.random={rows: 20, cols: 50}" --set gram.triangle=upper)
kmini_cli_test(gram.bad.pairs_path EXIT 2 STDERR "gram.write.pairs.path: cannot write '.*/no/such/dir/p.npy'"
               ARGS ${_small} --set "gram.write.pairs={path: /no/such/dir/p.npy, min: 1}")

# gram.engine: the tensor-core engine exists only in CUDA builds for sm_80+;
# elsewhere asking for it is exit 2 naming the key. Where it exists, its
# outputs are byte-identical to the popcount engine's.
kmini_cli_test(gram.bad.engine_name EXIT 2
               STDERR "gram.engine: got 'xor', expected one of auto \\| popcount \\| tensor_core"
               ARGS ${_small} --set gram.engine=xor)
if(NOT "CUDA" IN_LIST KMINI_KOKKOS_BACKENDS)
  # Named by the default execution space, as Kokkos spells it.
  set(_space_names "serial=Serial" "openmp=OpenMP" "threads=Threads" "hip=HIP" "sycl=SYCL")
  list(FILTER _space_names INCLUDE REGEX "^${KMINI_TEST_BACKEND}=")
  string(REGEX REPLACE "^.*=" "" _space "${_space_names}")
  kmini_cli_test(gram.bad.engine_unavailable EXIT 2
                 STDERR "gram.engine: got 'tensor_core', expected popcount or auto: this build \\(Kokkos ${_space}\\) has no tensor-core engine"
                 ARGS ${_small} --set gram.engine=tensor_core)
endif()
# gram.micro_kernel: a name not on the list is exit 2 naming the
# key; the portable micro-kernel and auto's (the target's best) give the same C.
kmini_cli_test(gram.bad.micro_kernel_name EXIT 2
               STDERR "gram.micro_kernel: got 'sse', expected one of auto \\| portable \\| avx2 \\| avx512bw \\| avx512_vpopcntdq"
               ARGS ${_small} --set gram.micro_kernel=sse)
foreach(_mk portable auto)
  kmini_cli_test(gram.micro_kernel.${_mk} EXIT 0 VERIFIED gram FIXTURES_SETUP gram_micro_kernels
                 ARGS --set run.kernels=[gram] "--set=gram.A.random={rows: 333, cols: 5000, density: 0.3, seed: 4}"
                      --set gram.micro_kernel=${_mk} --set gram.row_slice=100 --set gram.write.C=C.npy)
endforeach()
kmini_compare_outputs(gram.micro_kernel.identical_outputs FIXTURE gram_micro_kernels
                      RUNS gram.micro_kernel.portable gram.micro_kernel.auto FILES C.npy)
if("CUDA" IN_LIST KMINI_KOKKOS_BACKENDS)
  # Odd sizes (rows not a multiple of the tile, columns not of the mma's 256
  # bits), Jaccard top-k and pairs, at 1 and 2 ranks: identical files.
  foreach(_engine popcount tensor_core)
    foreach(np 1 2)
      kmini_cli_test(gram.engine.${_engine}.np${np} NP ${np} EXIT 0 VERIFIED gram FIXTURES_SETUP gram_engines
                     ARGS --set run.kernels=[gram] "--set=gram.A.random={rows: 333, cols: 1000, density: 0.3, seed: 4}"
                          --set gram.engine=${_engine} --set gram.row_slice=100 --set gram.similarity=jaccard
                          --set gram.write.C=C.npy "--set=gram.write.top_k={path: t.npy, k: 5}"
                          "--set=gram.write.pairs={path: p.npy, min: 0.2}")
    endforeach()
  endforeach()
  kmini_compare_outputs(gram.engine.identical_outputs FIXTURE gram_engines FILES C.npy t.npy p.npy
                        RUNS gram.engine.popcount.np1 gram.engine.tensor_core.np1 gram.engine.popcount.np2
                             gram.engine.tensor_core.np2)
endif()

# gram.distribution ring: each rank holds the rows of its slices,
# the other ranks' rows pass around the ring. Every output byte-identical to
# the replicated run on one rank, at 1, 2, 3 and 4 ranks: one input and A B^T
# (rows(A) != rows(B)), odd sizes, slices (chunks) of 5, 40 and 48 rows (below
# the 64-row tile), more ranks than tiles (41 rows: one tile), the packed
# upper triangle and the full matrix, pairs, top-k, count_at_least, summary.
kmini_cli_test(mpi.gram.random_ab.np1 NP 1 EXIT 0 VERIFIED gram FILES C.npy summary.json t.npy p.npy
               FIXTURES_SETUP gram_outputs
               ARGS --set run.kernels=[gram] --set "gram.A.random={rows: 300, cols: 257, seed: 2}"
                    --set "gram.B.random={rows: 131, cols: 257, seed: 3}" --set gram.row_slice=40
                    --set gram.similarity=dice --set gram.write.C=C.npy --set gram.write.summary=summary.json
                    --set "gram.write.top_k={path: t.npy, k: 7}" --set "gram.write.pairs={path: p.npy, min: 0.4}"
                    --set "gram.write.count_at_least=[0.3, 0.4]")
set(_ring_compare "")
foreach(np 1 2 3 4)
  set(_ring mpi.gram.ring)
  kmini_cli_test(${_ring}.np${np} NP ${np} EXIT 0 VERIFIED gram RANKS ${np} FILES C.npy summary.json
                 FIXTURES_SETUP gram_ring_outputs ARGS ${G}/A_file.yaml --set gram.distribution=ring)
  kmini_cli_test(${_ring}.upper_jaccard.np${np} NP ${np} EXIT 0 VERIFIED gram FILES J.npy FIXTURES_SETUP gram_ring_outputs
                 ARGS ${G}/A_packed.yaml --set gram.distribution=ring --set gram.row_slice=4
                      --set gram.similarity=jaccard --set gram.triangle=upper --set gram.write.C=J.npy)
  kmini_cli_test(${_ring}.random.np${np} NP ${np} EXIT 0 VERIFIED gram FILES C.npy summary.json
                 FIXTURES_SETUP gram_ring_outputs
                 ARGS --set run.kernels=[gram] --set gram.A.random.rows=300 --set gram.A.random.cols=257
                      --set gram.row_slice=48 --set gram.write.C=C.npy --set gram.write.summary=summary.json
                      --set gram.distribution=ring)
  kmini_cli_test(${_ring}.random_ab.np${np} NP ${np} EXIT 0 VERIFIED gram FILES C.npy summary.json t.npy p.npy
                 STDOUT "distribution: ring\n" FIXTURES_SETUP gram_ring_outputs
                 ARGS --set run.kernels=[gram] --set "gram.A.random={rows: 300, cols: 257, seed: 2}"
                      --set "gram.B.random={rows: 131, cols: 257, seed: 3}" --set gram.row_slice=40
                      --set gram.similarity=dice --set gram.write.C=C.npy --set gram.write.summary=summary.json
                      --set "gram.write.top_k={path: t.npy, k: 7}" --set "gram.write.pairs={path: p.npy, min: 0.4}"
                      --set "gram.write.count_at_least=[0.3, 0.4]" --set gram.distribution=ring)
  list(APPEND _ring_compare ${W}/gram.form.bool/C.npy ${W}/${_ring}.np${np}/C.npy
                            ${W}/gram.form.bool/summary.json ${W}/${_ring}.np${np}/summary.json
                            ${W}/mpi.gram.upper_jaccard.np1/J.npy ${W}/${_ring}.upper_jaccard.np${np}/J.npy
                            ${W}/mpi.gram.random.np1/C.npy ${W}/${_ring}.random.np${np}/C.npy
                            ${W}/mpi.gram.random.np1/summary.json ${W}/${_ring}.random.np${np}/summary.json)
  foreach(f C.npy summary.json t.npy p.npy)
    list(APPEND _ring_compare ${W}/mpi.gram.random_ab.np1/${f} ${W}/${_ring}.random_ab.np${np}/${f})
  endforeach()
  # The sparse deck (ties, empty rows, slices of 5 rows), one input and A B^T.
  foreach(input a ab)
    set(_b_args "")
    if(input STREQUAL "ab")
      set(_b_args --set "gram.B={file: ${G}/B_23x70_u1.npy}")
    endif()
    foreach(kind counts cosine)
      kmini_gram_sparse_limits(${kind})
      set(_run ${_ring}.sparse.${input}.${kind}.np${np})
      kmini_cli_test(${_run} NP ${np} EXIT 0 VERIFIED gram FILES C.npy pairs.npy top.npy summary.json
                     FIXTURES_SETUP gram_ring_outputs
                     ARGS ${G}/sparse.yaml ${_b_args} --set gram.similarity=${kind} --set gram.write.pairs.min=${_min}
                          --set "gram.write.count_at_least=${_thresholds}" --set gram.distribution=ring)
      foreach(f C.npy pairs.npy top.npy summary.json)
        list(APPEND _ring_compare ${W}/mpi.gram.sparse.${input}.${kind}.np1/${f} ${W}/${_run}/${f})
      endforeach()
    endforeach()
  endforeach()
endforeach()

# gram.ring_schedule: circulant (what auto picks without write.C and
# write.pairs): each rank holds block r of A (and B), pairs it with blocks
# r + s, s = 0 .. P/2 (the last step split in half when P is even; with B
# every block of B), keeps the top-k lists of its own rows and sends the
# partner rows' lists home. top-k, count_at_least and the summary
# byte-identical to the replicated run on one rank at 1-4 ranks: one input
# and A B^T, ties and empty rows, blocks of 10-41 rows (below the 64-row
# tile, windows of 5 rows, pieces of a quarter block), 3 rows on 4 ranks
# (empty blocks), 300 x 257 against 131 rows of B, every row verified.
set(_circ_compare "")
macro(kmini_gram_circulant_case tag)
  kmini_cli_test(mpi.gram.circulant_ref.${tag}.np1 NP 1 EXIT 0 VERIFIED gram FILES top.npy summary.json
                 FIXTURES_SETUP gram_circulant_outputs
                 ARGS --set run.kernels=[gram] --set gram.write.summary=summary.json ${ARGN})
  foreach(np 1 2 3 4)
    set(_run mpi.gram.ring.circulant.${tag}.np${np})
    kmini_cli_test(${_run} NP ${np} EXIT 0 VERIFIED gram FILES top.npy summary.json FIXTURES_SETUP gram_circulant_outputs
                   STDOUT "distribution: ring\n *replicated: [^\n]*\n *ring: [^\n]*circulant"
                   ARGS --set run.kernels=[gram] --set gram.write.summary=summary.json ${ARGN}
                        --set gram.distribution=ring)
    foreach(f top.npy summary.json)
      list(APPEND _circ_compare ${W}/mpi.gram.circulant_ref.${tag}.np1/${f} ${W}/${_run}/${f})
    endforeach()
  endforeach()
endmacro()
foreach(input a ab)
  set(_b_args "")
  if(input STREQUAL "ab")
    set(_b_args --set "gram.B={file: ${G}/B_23x70_u1.npy}")
  endif()
  foreach(kind counts jaccard)
    kmini_gram_sparse_limits(${kind})
    kmini_gram_circulant_case(ties.${input}.${kind} --set "gram.A={file: ${G}/A_41x70_ties.npy}" ${_b_args}
                              --set gram.row_slice=5 --set gram.similarity=${kind}
                              --set "gram.write.top_k={path: top.npy, k: 6}"
                              --set "gram.write.count_at_least=${_thresholds}")
  endforeach()
endforeach()
kmini_gram_circulant_case(tiny --set "gram.A.random={rows: 3, cols: 257, seed: 2}"
                          --set "gram.write.top_k={path: top.npy, k: 2}" "--set=gram.write.count_at_least=[60, 70]")
kmini_gram_circulant_case(random_ab --set "gram.A.random={rows: 300, cols: 257, seed: 2}"
                          --set "gram.B.random={rows: 131, cols: 257, seed: 3}" --set gram.row_slice=40
                          --set gram.similarity=dice --set "gram.write.top_k={path: top.npy, k: 7}"
                          --set "gram.write.count_at_least=[0.3, 0.4]")
kmini_gram_circulant_case(random_k40 --set "gram.A.random={rows: 300, cols: 257, seed: 2}" --set gram.row_slice=48
                          --set "gram.write.top_k={path: top.npy, k: 40}" "--set=gram.write.count_at_least=[60, 70]")
kmini_compare_pairs(mpi.gram.ring.circulant.byte_identical PAIRS ${_circ_compare} FIXTURES gram_circulant_outputs)
# The circulant computes top-k, count_at_least and the summary only.
kmini_cli_test(gram.bad.circulant_with_c EXIT 2
               STDERR "gram.ring_schedule: got 'circulant', expected slices or auto with write.C or write.pairs"
               ARGS ${_small} --set gram.write.C=C.npy --set gram.ring_schedule=circulant)

# gram.distribution: auto picks replicated while packed A, the top-k lists and
# a slice fit gram.memory_budget, else ring; --dry-run prints both.
# The deck asks for top-k, count_at_least and the summary: the ring runs the
# circulant (its block, two pieces of 256 rows, the top-k lists of its rows;
# blocks 1 and 2 of 25 000 rows sent, 3 steps); with ring_schedule: slices the
# chunks of the replicated slices travel every round.
# Slice heights, windows and the packed rows' padding are per-backend
# parameters (gram_params.hpp), so some figures are too: CUDA's as a CUDA
# build prints them, the host backends' as Serial and OpenMP do.
# auto on a real run (300 x 257 in slices of 16, 2 ranks): a budget between the
# ring's and replicated's needs. Host backends: replicated packed A 19 200 +
# 16 rows of C x 3 600 = 76 800 bytes, the ring 160 held rows + two pieces of
# 32 rows, 64 bytes each, + the slice = 71 936. CUDA (rows of 6 words: 5 padded
# to 16 bytes): replicated about 33 600, the ring about 29 750.
if(KMINI_TEST_BACKEND STREQUAL "cuda")
  set(_plan_replicated "held 4.69 GiB per rank \\(packed 2.33 GiB\\)")
  set(_plan_ring "held 0.624 GiB per rank \\(packed 0.594 GiB\\)")
  set(_plan_window "25000 x 256")
  set(_plan_slices "held 3.24 GiB per rank \\(packed 0.876 GiB\\), sent 7.01 GiB per rank")
  set(_auto_ring_budget 31600)
else()
  set(_plan_replicated "held 7.07 GiB per rank \\(packed 2.33 GiB\\)")
  set(_plan_ring "held 0.613 GiB per rank \\(packed 0.595 GiB\\)")
  set(_plan_window "256 x 256")
  set(_plan_slices "held 5.62 GiB per rank \\(packed 0.877 GiB\\), sent 7.02 GiB per rank")
  set(_auto_ring_budget 74000)
endif()
kmini_cli_test(mpi.gram.dry_run_distributions.np4 NP 4 EXIT 0
               STDOUT "distribution: replicated\n *replicated: ${_plan_replicated}, sent 0 GiB per rank, 4 round\\(s\\).*ring: *${_plan_ring}, sent 1.18 GiB per rank, 3 round\\(s\\), circulant: .* windows of ${_plan_window}, 98 piece\\(s\\) of 256 rows per block.*auto picks: replicated"
               ARGS inputs/gram_100k.yaml --dry-run)
kmini_cli_test(mpi.gram.dry_run_slices.np4 NP 4 EXIT 0
               STDOUT "ring: *${_plan_slices}, 4 round\\(s\\) of 4 step\\(s\\)"
               ARGS inputs/gram_100k.yaml --dry-run --set gram.ring_schedule=slices)
kmini_cli_test(mpi.gram.dry_run_auto_ring.np4 NP 4 EXIT 0
               STDOUT "distribution: ring \\(gram.distribution: auto\\)\n *replicated: does not fit: gram.memory_budget: 1.86 GiB cannot hold packed A \\(2.33 GiB\\).*ring: *${_plan_ring}.*circulant.*auto picks: ring"
               ARGS inputs/gram_100k.yaml --dry-run --set gram.memory_budget=2e9 --set gram.distribution=auto)
kmini_cli_test(mpi.gram.auto_ring.np2 NP 2 EXIT 0 VERIFIED gram FILES C.npy summary.json FIXTURES_SETUP gram_ring_outputs
               STDOUT "distribution: ring \\(gram.distribution: auto\\)"
               ARGS --set run.kernels=[gram] --set gram.A.random.rows=300 --set gram.A.random.cols=257
                    --set gram.row_slice=16 --set gram.write.C=C.npy --set gram.write.summary=summary.json
                    --set gram.distribution=auto --set gram.memory_budget=${_auto_ring_budget})
kmini_cli_test(mpi.gram.auto_replicated.np2 NP 2 EXIT 0 VERIFIED gram
               STDOUT "distribution: replicated \\(gram.distribution: auto\\)"
               ARGS --set run.kernels=[gram] --set gram.A.random.rows=300 --set gram.A.random.cols=257
                    --set gram.row_slice=16 --set gram.write.C=C.npy --set gram.distribution=auto
                    --set gram.memory_budget=80000)
list(APPEND _ring_compare ${W}/mpi.gram.random.np1/C.npy ${W}/mpi.gram.auto_ring.np2/C.npy)
kmini_cli_test(gram.bad.distribution EXIT 2
               STDERR "gram.distribution: got 'star', expected one of replicated \\| ring \\| auto"
               ARGS ${_small} --set gram.distribution=star)
# A bad value in the rows one rank holds: the same one-line error on every rank, before any round.
kmini_cli_test(mpi.gram.ring.bad.value_late_row.np@NP@ NP 2 3 EXIT 2
               STDERR "bad_value_row30.npy: element \\(30, 5\\) is 2 \\(expected 0 or 1\\)"
               ARGS ${G}/A_file.yaml --set gram.A.file=${G}/bad_value_row30.npy --set gram.distribution=ring
                    --set gram.row_slice=8)
kmini_cli_test(mpi.gram.ring.circulant.bad.value_late_row.np@NP@ NP 2 3 EXIT 2
               STDERR "bad_value_row30.npy: element \\(30, 5\\) is 2 \\(expected 0 or 1\\)"
               ARGS ${G}/A_file.yaml --set gram.A.file=${G}/bad_value_row30.npy --set gram.distribution=ring
                    --set gram.ring_schedule=circulant --set "gram.write={top_k: {path: t.npy, k: 3}}")
kmini_compare_pairs(mpi.gram.ring.byte_identical PAIRS ${_ring_compare}
                    FIXTURES gram_outputs gram_sparse_outputs gram_ring_outputs)
