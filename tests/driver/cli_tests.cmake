# CLI tests: what a user sees for good and bad invocations.
set(D ${KMINI_TEST_DATA}/decks)

kmini_cli_test(cli.default_run EXIT 0 VERIFIED stream rk4 discount gram RANKS 1 FILES results.json
               STDOUT "stream +add_f64.*yes" ARGS "")
kmini_cli_test(cli.help EXIT 0 STDOUT "usage: kmini" ARGS --help)
kmini_cli_test(cli.version EXIT 0 STDOUT "kmini [0-9]+\\.[0-9]+\\.[0-9]+ \\(Kokkos" ARGS --version)
# The build tree's kmini reads the source tree's decks (project.install checks an installed one).
kmini_cli_test(cli.data_dir EXIT 0 STDOUT "^${PROJECT_SOURCE_DIR}\n$" ARGS --data-dir)
kmini_cli_test(cli.dry_run EXIT 0 STDOUT "dry run.*stream: n = 1000 per rank" ARGS --dry-run --set stream.n=1000)
kmini_cli_test(cli.set_override EXIT 0 VERIFIED stream
               ARGS inputs/default.yaml --set stream.n=1001 --set stream.ops=[exp] --set stream.repeat=2)
kmini_cli_test(cli.verify_off EXIT 0 STDOUT "skipped" ARGS --set run.verify=false --set stream.n=100)

# The deck recorded in results.json runs again to the same results: every kernel,
# file inputs, outputs, `auto` values and --set overrides; one rank and two.
set(_rerun_files delta.csv F_set.npy reduced.npy summary.json)
kmini_cli_test(cli.rerun_recorded_deck SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/rerun_deck.cmake FILES ${_rerun_files}
               DEFS "-DEXPECT_DECK=gram.row_slice=auto gram.memory_budget=auto rk4.g=auto stream.n=3000"
               ARGS ${D}/rerun.yaml --set stream.n=3000 --set rk4.write.F=F_set.npy)
kmini_cli_test(mpi.rerun_recorded_deck.np2 NP 2 SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/rerun_deck.cmake
               FILES ${_rerun_files} DEFS "-DEXPECT_DECK=gram.row_slice=auto"
               ARGS ${D}/rerun.yaml --set rk4.write.F=F_set.npy)
kmini_cli_test(cli.rerun_default_deck SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/rerun_deck.cmake
               DEFS "-DEXPECT_DECK=gram.row_slice=256" ARGS --set stream.n=10000 --set gram.A.random.rows=100)

# What results.json records about the build, the machine and each timing's spread over ranks.
find_package(Git QUIET)
set(_record_defs -DEXPECT_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DEXPECT_COMPILER_ID=${CMAKE_CXX_COMPILER_ID}
    -DEXPECT_COMPILER_VERSION=${CMAKE_CXX_COMPILER_VERSION} -DEXPECT_BACKEND=${KMINI_TEST_BACKEND}
    -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DGIT=${GIT_EXECUTABLE})
set(_small --set stream.n=20000 --set gram.A.random.rows=200 --set discount.dates=20 --set rk4.n=64)
kmini_cli_test(cli.records EXIT 0 VERIFIED stream rk4 discount gram SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/check_records.cmake
               DEFS ${_record_defs} ARGS ${_small})
kmini_cli_test(mpi.records.np2 NP 2 EXIT 0 VERIFIED stream rk4 discount gram RANKS 2
               SCRIPT ${CMAKE_CURRENT_SOURCE_DIR}/check_records.cmake DEFS ${_record_defs} ARGS ${_small})

# Bad usage: exit 2 with one line naming the file, key or value.
kmini_cli_test(cli.bad.option EXIT 2 STDERR "unknown option '--frobnicate'" ARGS --frobnicate)
kmini_cli_test(cli.bad.missing_deck EXIT 2 STDERR "no/such/deck.yaml: cannot open a YAML deck file \\(No such file or directory\\)" ARGS no/such/deck.yaml)
kmini_cli_test(cli.bad.yaml EXIT 2 STDERR "bad_yaml.yaml:[0-9]+: invalid YAML" ARGS ${D}/bad_yaml.yaml)
kmini_cli_test(cli.bad.unknown_key EXIT 2
               STDERR "unknown_key.yaml:4: unknown key 'stream.size' \\(expected one of: n, ops, repeat\\)"
               ARGS ${D}/unknown_key.yaml)
kmini_cli_test(cli.bad.unknown_section EXIT 2 STDERR "unknown_section.yaml:3: unknown key 'strem'"
               ARGS ${D}/unknown_section.yaml)
kmini_cli_test(cli.bad.negative_n EXIT 2
               STDERR "negative_n.yaml:4: stream.n: got '-5', expected an integer >= 1" ARGS ${D}/negative_n.yaml)
kmini_cli_test(cli.bad.wrong_type EXIT 2
               STDERR "wrong_type.yaml:4: stream.n: got 'lots', expected an integer >= 1" ARGS ${D}/wrong_type.yaml)
kmini_cli_test(cli.bad.unknown_kernel EXIT 2
               STDERR "unknown_kernel.yaml:2: run.kernels: got '\\[stream, warp\\]', expected a list of names"
               ARGS ${D}/unknown_kernel.yaml)
kmini_cli_test(cli.bad.set_value EXIT 2
               STDERR "--set stream.repeat=0: stream.repeat: got '0', expected an integer in \\[1, 100000\\]"
               ARGS --set stream.repeat=0)
kmini_cli_test(cli.bad.set_syntax EXIT 2 STDERR "--set stream.n: expected KEY=VALUE" ARGS --set stream.n)
kmini_cli_test(cli.bad.out_dir EXIT 2
               STDERR "--out ${D}/negative_n.yaml: cannot create the output directory \\(Not a directory\\)"
               ARGS --out ${D}/negative_n.yaml)
kmini_cli_test(cli.bad.bool EXIT 2 STDERR "run.verify: got 'maybe', expected true or false"
               ARGS --set run.verify=maybe)

# MPI: every rank agrees; results.json counts the ranks; errors print once.
kmini_cli_test(mpi.cli.default.np@NP@ NP 1 2 4 EXIT 0 VERIFIED stream rk4 discount gram RANKS @NP@
               ARGS --set stream.n=100000 --set stream.repeat=3)
kmini_cli_test(mpi.cli.bad_deck.np2 NP 2 EXIT 2 STDERR "negative_n.yaml:4: stream.n" ARGS ${D}/negative_n.yaml)
kmini_cli_test(mpi.cli.bad_out_dir.np2 NP 2 EXIT 2 STDERR "cannot create the output directory"
               ARGS --set stream.n=100 --out ${D}/negative_n.yaml)

# Every shipped deck stays valid (validated and planned, not run).
file(GLOB _decks CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/inputs/*.yaml ${PROJECT_SOURCE_DIR}/inputs/bench/*.yaml)
foreach(_deck IN LISTS _decks)
  string(REGEX REPLACE "[/.]" "_" _name "${_deck}")
  kmini_cli_test(cli.deck_plans.${_name} EXIT 0 STDOUT "plan \\(dry run" ARGS ${_deck} --dry-run)
endforeach()
# The GPU decks too; those for the tensor-core engine are exit 2, naming the
# key, on builds without it.
file(GLOB _decks CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/inputs/gpu/*.yaml)
foreach(_deck IN LISTS _decks)
  string(REGEX REPLACE "[/.]" "_" _name "${_deck}")
  if(_deck MATCHES "tensor_core" AND NOT "CUDA" IN_LIST KMINI_KOKKOS_BACKENDS)
    kmini_cli_test(cli.deck_plans.${_name} EXIT 2 STDERR "${_deck}:[0-9]+: gram.engine: got 'tensor_core'"
                   ARGS ${_deck} --dry-run)
  else()
    kmini_cli_test(cli.deck_plans.${_name} EXIT 0 STDOUT "plan \\(dry run" ARGS ${_deck} --dry-run)
  endif()
endforeach()

# Ambiguous decks and command lines (kmini_usage_test): exit 2, one line naming the deck
# line or the --set / option, and nothing written.
set(W ${KMINI_TEST_WORK})

kmini_usage_test(cli.usage.duplicate_key ARGS ${D}/duplicate_key.yaml
                 STDERR "duplicate_key.yaml:5: stream.n: key given twice \\(lines 4 and 5\\)")
kmini_usage_test(cli.usage.duplicate_section ARGS ${D}/duplicate_section.yaml
                 STDERR "duplicate_section.yaml:5: run: section given twice \\(lines 1 and 5\\)")
kmini_usage_test(cli.usage.two_documents ARGS ${D}/two_documents.yaml
                 STDERR "two_documents.yaml:2: a second YAML document starts here; a deck is one document")
kmini_usage_test(cli.usage.second_document ARGS ${D}/second_document.yaml
                 STDERR "second_document.yaml:3: a second YAML document starts here; a deck is one document")
kmini_cli_test(cli.empty_deck EXIT 0 STDOUT "deck .*empty.yaml.*plan \\(dry run" ARGS ${D}/empty.yaml --dry-run)
kmini_usage_test(cli.usage.deck_is_directory ARGS ${D}
                 STDERR "kmini: error: [^\n]*/data/decks: is a directory, expected a YAML deck file \\(a regular file\\)")

kmini_usage_test(cli.usage.set_duplicate_key ARGS "--set=stream={n: 1000, n: -5}"
                 STDERR "--set stream={n: 1000, n: -5}: stream.n: key given twice")
kmini_usage_test(cli.usage.set_trailing_dot ARGS --set rk4.n.=5
                 STDERR "--set rk4.n.=5: empty component in key 'rk4.n.', expected names joined by single dots")
kmini_usage_test(cli.usage.set_leading_dot ARGS --set .rk4.n=5
                 STDERR "--set .rk4.n=5: empty component in key '.rk4.n'")
kmini_usage_test(cli.usage.set_double_dot ARGS --set rk4..n=5
                 STDERR "--set rk4..n=5: empty component in key 'rk4..n'")
kmini_usage_test(cli.usage.set_space_in_key ARGS "--set=rk4. n=5"
                 STDERR "--set rk4. n=5: key 'rk4. n' contains ' ', expected names of letters, digits, _ and -")
kmini_usage_test(cli.usage.set_second_document ARGS "--set=stream.n=1\n---\nrun: {kernels: [bogus]}"
                 STDERR "--set stream.n=1\\\\n---\\\\nrun: {kernels: \\[bogus\\]}: the value contains the control character '\\\\n' at offset 1, expected YAML on one line")
kmini_usage_test(cli.usage.set_unknown_section ARGS --set bogus.x=1
                 STDERR "kmini: error: --set bogus.x=1: unknown key 'bogus' \\(expected one of:")
kmini_usage_test(cli.usage.out_twice ARGS --set stream.n=10 --out ${W}/cli.usage.out_twice/a --out ${W}/cli.usage.out_twice/b
                 STDERR "kmini: error: --out given twice \\('[^']*/cli.usage.out_twice/a' and '[^']*/cli.usage.out_twice/b'\\)")

# Kokkos' flags are checked before Kokkos::initialize (which threw std::invalid_argument).
kmini_usage_test(cli.usage.kokkos_threads ARGS --kokkos-threads=abc
                 STDERR "kmini: error: --kokkos-threads=abc: got 'abc', expected --kokkos-threads=N with N a whole number >= 1")
kmini_usage_test(cli.usage.kokkos_num_threads ARGS --kokkos-num-threads=abc
                 STDERR "kmini: error: --kokkos-num-threads=abc: got 'abc', expected --kokkos-num-threads=N with N a whole")
kmini_usage_test(cli.usage.kokkos_unknown ARGS --kokkos-frobnicate=1
                 STDERR "kmini: error: unknown Kokkos flag '--kokkos-frobnicate=1' \\(Kokkos [0-9.]+ knows --kokkos-num-threads, ")
kmini_usage_test(mpi.cli.usage.kokkos_threads.np2 NP 2 ARGS --kokkos-threads=abc
                 STDERR "kmini: error: --kokkos-threads=abc: got 'abc', expected --kokkos-threads=N")
kmini_cli_test(cli.kokkos_flags_both_spellings EXIT 0 STDOUT "plan \\(dry run"
               ARGS --kokkos-num-threads=1 --kokkos-disable-warnings=false --kokkos-device-id=0 --dry-run)

# Messages name the --set or deck line and the key, and print values on one line, cut.
kmini_usage_test(cli.usage.block_map_value ARGS ${D}/block_map_value.yaml
                 STDERR "block_map_value.yaml:5: stream.n: got '{a: 1, b: 2}', expected an integer >= 1")
kmini_usage_test(cli.usage.discount_ids_blamed ARGS --set discount.ids=1e9
                 STDERR "--set discount.ids=1e9: discount.ids: needs [0-9.]+ TiB of device memory per rank, the device has ")
kmini_usage_test(cli.usage.discount_missing_file ARGS ${D}/discount_missing_file.yaml
                 STDERR "discount_missing_file.yaml:5: discount.init.discount.file: no/such/discount.npy: cannot open")
kmini_usage_test(cli.usage.discount_missing_file_set ARGS "--set=discount.init.mult_by={file: missing.npy}"
                 STDERR "--set discount.init.mult_by={file: missing.npy}: discount.init.mult_by.file: missing.npy: cannot open")
kmini_usage_test(cli.usage.gram_missing_file ARGS ${D}/gram_missing_file.yaml
                 STDERR "gram_missing_file.yaml:4: gram.A.file: no/such/A.npy: cannot open")
kmini_usage_test(cli.usage.gram_missing_file_set ARGS ${D}/gram_missing_file.yaml --set gram.A.file=missing.npy
                 STDERR "--set gram.A.file=missing.npy: gram.A.file: missing.npy: cannot open")
kmini_usage_test(cli.usage.rk4_missing_restart ARGS ${D}/rk4_missing_restart.yaml
                 STDERR "rk4_missing_restart.yaml:5: rk4.restart: no/such/checkpoint.npy: cannot open")
string(REPEAT "1" 100000 _ones)
kmini_usage_test(cli.usage.long_set_value ARGS --set stream.n=${_ones}
                 STDERR "--set stream.n=1+\\.\\.\\.1+: stream.n: got '1+\\.\\.\\.1+' \\(100000 chars\\), expected an integer >= 1")
string(REPEAT "1" 1000000 _ones)
file(WRITE ${KMINI_TEST_WORK}/long_value.yaml "run:\n  kernels: [stream]\nstream:\n  n: ${_ones}\n")
kmini_usage_test(cli.usage.long_deck_value ARGS ${KMINI_TEST_WORK}/long_value.yaml
                 STDERR "long_value.yaml:4: stream.n: got '1+\\.\\.\\.1+' \\(1000000 chars\\), expected an integer >= 1")

# Planning for another machine from here (--dry-run --device-memory SIZE --devices N): the
# plan for 8 ranks with a device of 80 GiB each; the budget gram's `auto` takes is half of
# the named device; a device too small is a note, as for this machine's; both options need
# --dry-run, and a bad size is one line.
kmini_cli_test(cli.dry_run.named_device EXIT 0
               STDOUT "8 MPI rank\\(s\\).*planned for another machine: 8 rank\\(s\\), one device each of 80 GiB.*32 row slice\\(s\\) of 3136 rows"
               ARGS inputs/gram_100k.yaml --dry-run --device-memory 80GiB --devices 8)
kmini_cli_test(cli.dry_run.named_device_auto_budget EXIT 0 STDOUT "of budget 65.7 GiB"
               ARGS inputs/gram_100k.yaml --dry-run --set gram.memory_budget=auto --device-memory 141GB)
kmini_cli_test(cli.dry_run.named_device_too_small EXIT 0
               STDOUT "note: [^\n]*gram.memory_budget: needs 59.6 GiB of device memory per rank, the device has 40 GiB \\(--device-memory\\) \\(a run on that device stops with exit 2\\)"
               ARGS inputs/gram_100k.yaml --dry-run --device-memory 40GiB)
kmini_cli_test(cli.device_memory_needs_dry_run EXIT 2 STDERR "--device-memory plans for another machine: it needs --dry-run"
               ARGS --device-memory 80GiB)
kmini_cli_test(cli.device_memory_bad_size EXIT 2
               STDERR "--device-memory '80 parsecs': expected a size such as 80GiB, 141GB or 8.5e10 \\(bytes\\)"
               ARGS --dry-run --device-memory "80 parsecs")
kmini_cli_test(cli.devices_bad_count EXIT 2 STDERR "--devices '0': expected a number of devices from 1 to 1048576"
               ARGS --dry-run --devices 0)
