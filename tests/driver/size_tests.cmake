# Sizes: values the deck accepts but no device can hold, .npy headers whose
# byte count overflows, memory_budget against the device, and allocations that
# fail anyway. Each is one line on stderr: exit 2 before anything is
# allocated, exit 1 for an allocation that failed at run time.
# Expectations hold on any machine with far less than 1 EiB of memory (and, for
# the exit-1 case, 460 MiB available).

# The error is one whole line and the last thing on stderr: "${_line}kmini: error: ....$"
# (a line start; Kokkos may print its initialisation warnings before it, e.g. OMP_PROC_BIND unset).
set(_line "(^|\n)")
set(_avail "the device has [0-9.]+ [KMGTPE]?i?B available")

kmini_cli_test(size.stream.n_2e62 EXIT 2
               STDERR "${_line}kmini: error: --set stream.n=4611686018427387904: stream.n: needs 96 EiB of device memory per rank, ${_avail}.$"
               ARGS --set run.kernels=[stream] --set stream.n=4611686018427387904)
# 2^63 - 1 must not hang in View construction: it must answer at once.
kmini_cli_test(size.stream.n_max EXIT 2 TIMEOUT 30
               STDERR "${_line}kmini: error: --set stream.n=9223372036854775807: stream.n: needs 192 EiB of device memory per rank, ${_avail}.$"
               ARGS --set run.kernels=[stream] --set stream.n=9223372036854775807)
kmini_cli_test(size.stream.n_1e18 EXIT 2
               STDERR "${_line}kmini: error: --set stream.n=1e18: stream.n: needs 20.8 EiB of device memory per rank, ${_avail}.$"
               ARGS --set run.kernels=[stream] --set stream.n=1e18)
# From a deck file: the file and line are named.
kmini_cli_test(size.stream.n_deck EXIT 2
               STDERR "${_line}kmini: error: [^ ]*size_stream_huge.yaml:3: stream.n: needs 20.8 EiB of device memory per rank, ${_avail}.$"
               ARGS ${KMINI_TEST_DATA}/sizes/size_stream_huge.yaml)
# The delta history of 2^60 + 1 steps overflows a 64-bit byte count.
kmini_cli_test(size.rk4.steps_2e60 EXIT 2
               STDERR "${_line}kmini: error: --set rk4.steps=1152921504606846976: rk4.steps: needs [0-9.]+ EiB of device memory per rank, ${_avail}.$"
               ARGS --set run.kernels=[rk4] --set rk4.steps=1152921504606846976)
# The largest n the deck accepts needs over 100 TiB on one rank.
kmini_cli_test(size.rk4.n_max EXIT 2
               STDERR "${_line}kmini: error: --set rk4.n=2097152: rk4.n: needs [0-9.]+ TiB of device memory per rank, ${_avail}.$"
               ARGS --set run.kernels=[rk4] --set rk4.n=2097152)
kmini_cli_test(size.gram.budget_over_device EXIT 2
               STDERR "${_line}kmini: error: --set gram.memory_budget=1e18: gram.memory_budget: needs 888 PiB of device memory per rank, ${_avail}.$"
               ARGS --set run.kernels=[gram] --set gram.memory_budget=1e18)
kmini_cli_test(size.gram.row_slice_over_budget EXIT 2
               STDERR "${_line}kmini: error: --set gram.row_slice=64: gram.row_slice: got '64', expected a slice height within gram.memory_budget \\(1 B\\): packed A [0-9.]+ KiB \\+ 64 rows of C [0-9.]+ KiB.$"
               ARGS --set run.kernels=[gram] --set gram.memory_budget=1 --set gram.row_slice=64)
kmini_cli_test(size.npy.shape_overflow EXIT 2
               STDERR "${_line}kmini: error: --set rk4.init.F={file: [^}]*}: rk4.init.F.file: [^ ]*shape_overflow.npy: shape \\(4, 4611686018427387904\\) of f8 is too large \\(overflows 64-bit byte count\\).$"
               ARGS --set run.kernels=[rk4] "--set=rk4.init.F={file: ${KMINI_TEST_DATA}/npy/shape_overflow.npy}")
# Every rank stops with the same status; rank 0 prints the line (each rank's share of the node's memory).
# (Not anchored: Kokkos and mpiexec may print their own lines around it.)
kmini_cli_test(mpi.size.stream.n_2e62.np2 NP 2 EXIT 2
               STDERR "kmini: error: --set stream.n=4611686018427387904: stream.n: needs 96 EiB of device memory per rank, ${_avail}"
               ARGS --set run.kernels=[stream] --set stream.n=4611686018427387904)
kmini_cli_test(mpi.size.rk4.steps_2e60.np2 NP 2 EXIT 2
               STDERR "kmini: error: --set rk4.steps=1152921504606846976: rk4.steps: needs [0-9.]+ EiB of device memory per rank"
               ARGS --set run.kernels=[rk4] --set rk4.steps=1152921504606846976)

# --dry-run plans decks meant for bigger machines: a plan that does not fit
# here is a note, exit 0; one that fits no machine (past 2^63 bytes) is exit 2.
kmini_cli_test(size.dry_run.note EXIT 0
               STDOUT "note: --set gram.memory_budget=1e18: gram.memory_budget: needs 888 PiB of device memory per rank, ${_avail} \\(a run here stops with exit 2\\)"
               ARGS --set run.kernels=[gram] --set gram.memory_budget=1e18 --dry-run)
kmini_cli_test(size.dry_run.overflow EXIT 2 STDERR "stream.n: needs 96 EiB of device memory per rank"
               ARGS --set run.kernels=[stream] --set stream.n=4611686018427387904 --dry-run)

# An allocation that fails although the plan fitted (here: an address-space
# limit the memory query does not see; in production: memory taken by another
# process meanwhile) is one line naming the kernel, the View and its size.
# On GPU builds the limit stops the CUDA runtime's own start first: skipped there.
if(KMINI_TEST_BACKEND MATCHES "cuda|hip|sycl")
  kmini_skip_test(size.alloc_failure "skipped: ulimit -v stops the GPU runtime before any allocation of kmini" LABELS cli)
else()
  kmini_cli_test(size.alloc_failure EXIT 1
                 STDERR "${_line}kmini: error: stream: device allocation of kmini::stream::[abc] \\(153 MiB\\) failed: [^\n]*.$"
                 DEFS -DKMINI=/bin/sh
                 ARGS ${CMAKE_CURRENT_SOURCE_DIR}/ulimit_v.sh 300000 $<TARGET_FILE:kmini>
                      --set run.kernels=[stream] --set stream.n=2e7 --set stream.repeat=1)
endif()
