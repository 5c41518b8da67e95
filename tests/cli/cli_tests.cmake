# CLI tests: what a user sees for good and bad invocations.
set(D ${CMAKE_CURRENT_SOURCE_DIR}/data/decks)

kmini_cli_test(cli.default_run EXIT 0 VERIFIED stream rk4 discount gram RANKS 1 FILES results.json
               STDOUT "stream.add_f64.*yes" ARGS "")
kmini_cli_test(cli.help EXIT 0 STDOUT "usage: kmini" ARGS --help)
kmini_cli_test(cli.version EXIT 0 STDOUT "kmini [0-9]+\\.[0-9]+\\.[0-9]+ \\(Kokkos" ARGS --version)
kmini_cli_test(cli.dry_run EXIT 0 STDOUT "dry run.*stream: n = 1000 per rank" ARGS --dry-run --set stream.n=1000)
kmini_cli_test(cli.set_override EXIT 0 VERIFIED stream
               ARGS inputs/default.yaml --set stream.n=1001 --set stream.ops=[exp] --set stream.repeat=2)
kmini_cli_test(cli.verify_off EXIT 0 STDOUT "skipped" ARGS --set run.verify=false --set stream.n=100)

# Bad usage: exit 2 with one line naming the file, key or value.
kmini_cli_test(cli.bad.option EXIT 2 STDERR "unknown option '--frobnicate'" ARGS --frobnicate)
kmini_cli_test(cli.bad.missing_deck EXIT 2 STDERR "no/such/deck.yaml: cannot open deck file" ARGS no/such/deck.yaml)
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
foreach(np 1 2 4)
  kmini_cli_test(mpi.cli.default.np${np} NP ${np} EXIT 0 VERIFIED stream rk4 discount gram RANKS ${np}
                 ARGS --set stream.n=100000 --set stream.repeat=3)
endforeach()
kmini_cli_test(mpi.cli.bad_deck.np2 NP 2 EXIT 2 STDERR "negative_n.yaml:4: stream.n" ARGS ${D}/negative_n.yaml)
kmini_cli_test(mpi.cli.bad_out_dir.np2 NP 2 EXIT 2 STDERR "cannot create the output directory"
               ARGS --set stream.n=100 --out ${D}/negative_n.yaml)

# Every shipped deck stays valid (validated and planned, not run).
file(GLOB _decks CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/inputs/*.yaml ${PROJECT_SOURCE_DIR}/inputs/bench/*.yaml)
foreach(_deck IN LISTS _decks)
  string(REGEX REPLACE "[/.]" "_" _name "${_deck}")
  kmini_cli_test(cli.deck_plans.${_name} EXIT 0 STDOUT "plan \\(dry run" ARGS ${_deck} --dry-run)
endforeach()
