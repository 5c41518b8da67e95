#include "driver/cli.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"

namespace kmini {

namespace {

CommandLine parse_describe(int argc, const char* const* argv) {
  CommandLine cl;
  cl.describe = true;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--json") cl.describe_format = "json";
    else if (a == "--markdown") cl.describe_format = "markdown";
    else if (a == "--help" || a == "-h") cl.help = true;
    else if (a.rfind("--kokkos-", 0) == 0) continue;
    else if (!a.empty() && a[0] == '-')
      throw UsageError("describe: unknown option " + quoted_value(a) + " (expected --json or --markdown)");
    else if (cl.describe_kernel.empty()) cl.describe_kernel = a;
    else
      throw UsageError("describe: more than one kernel given (" + quoted_value(cl.describe_kernel) + " and " +
                       quoted_value(a) + ")");
  }
  return cl;
}

}  // namespace

CommandLine parse_command_line(int argc, const char* const* argv) {
  if (argc > 1 && std::string(argv[1]) == "describe") return parse_describe(argc, argv);
  CommandLine cl;
  bool out_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& opt) -> std::string {
      const std::string prefix = opt + "=";
      if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
      if (i + 1 >= argc) throw UsageError("option " + opt + " needs a value (see --help)");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") cl.help = true;
    else if (a == "--version") cl.version = true;
    else if (a == "--dry-run") cl.dry_run = true;
    else if (a == "--set" || a.rfind("--set=", 0) == 0) cl.sets.push_back(value("--set"));
    else if (a == "--out" || a.rfind("--out=", 0) == 0) {
      // One value: a second --out is ambiguous, not an override.
      const std::string dir = value("--out");
      if (out_given)
        throw UsageError("--out given twice (" + quoted_value(cl.out_dir) + " and " + quoted_value(dir) + ")");
      if (dir.empty()) throw UsageError("--out needs a non-empty directory name");
      cl.out_dir = dir;
      out_given = true;
    } else if (a.rfind("--kokkos-", 0) == 0) continue;  // checked by Environment (compat::kokkos_flags)
    else if (!a.empty() && a[0] == '-') throw UsageError("unknown option " + quoted_value(a) + " (see --help)");
    else if (a.empty()) throw UsageError("empty deck name");
    else if (cl.deck.empty()) cl.deck = a;
    else throw UsageError("more than one deck given (" + quoted_value(cl.deck) + " and " + quoted_value(a) + ")");
  }
  return cl;
}

std::string usage_text() {
  return "usage: kmini [DECK.yaml] [--set KEY=VALUE]... [--out DIR] [--dry-run] [--help] [--version]\n"
         "       kmini describe [KERNEL] [--json | --markdown]\n"
         "             [Kokkos flags such as --kokkos-num-threads=N, checked before Kokkos starts]\n"
         "\n"
         "  DECK.yaml        input deck; without one kmini runs its built-in default\n"
         "                   deck (identical to inputs/default.yaml)\n"
         "  --set KEY=VALUE  override a deck key by its dotted path, e.g. --set stream.n=1000\n"
         "                   or --set run.kernels=[stream]; validated like the deck\n"
         "  --out DIR        where results.json and relative output paths go (default kmini-out;\n"
         "                   given at most once)\n"
         "  --dry-run        validate the deck and print the plan; run nothing\n"
         "  describe         each kernel's deck keys (type, default, unit, meaning), figure of\n"
         "                   merit and decks; --json for scripts, --markdown for the deck reference\n"
         "\n"
         "Exit status: 0 success, 1 verification or runtime failure, 2 bad usage, deck or input file.\n";
}

}  // namespace kmini
