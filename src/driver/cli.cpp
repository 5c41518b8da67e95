#include "driver/cli.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"

#include <cstdlib>

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
    else if (a == "--data-dir") cl.data_dir = true;
    else if (a == "--dry-run") cl.dry_run = true;
    else if (a == "--quiet") cl.quiet = true;
    else if (a == "--device-memory" || a.rfind("--device-memory=", 0) == 0)
      cl.device_memory = parse_byte_size("--device-memory", value("--device-memory"));
    else if (a == "--devices" || a.rfind("--devices=", 0) == 0) {
      const std::string n = value("--devices");
      char* end = nullptr;
      const long v = std::strtol(n.c_str(), &end, 10);
      if (n.empty() || *end != '\0' || v < 1 || v > 1 << 20)
        throw UsageError("--devices " + quoted_value(n) + ": expected a number of devices from 1 to 1048576");
      cl.devices = static_cast<int>(v);
    } else if (a == "--set" || a.rfind("--set=", 0) == 0) cl.sets.push_back(value("--set"));
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
  if ((cl.device_memory > 0 || cl.devices > 0) && !cl.dry_run)
    throw UsageError(std::string(cl.device_memory > 0 ? "--device-memory" : "--devices") +
                     " plans for another machine: it needs --dry-run");
  return cl;
}

std::uint64_t parse_byte_size(const std::string& option, const std::string& text) {
  const std::string expected =
      option + " " + quoted_value(text) + ": expected a size such as 80GiB, 141GB or 8.5e10 (bytes)";
  char* end = nullptr;
  const double number = std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || !(number > 0)) throw UsageError(expected);
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  struct Unit {
    const char* name;
    double bytes;
  };
  static const Unit units[] = {
      {"", 1},     {"B", 1},    {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
      {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6},     {"GB", 1e9},        {"TB", 1e12}};
  for (const Unit& u : units)
    if (unit == u.name) {
      const double bytes = number * u.bytes;
      if (bytes < 1 || bytes > 1.8e19) throw UsageError(expected);
      return static_cast<std::uint64_t>(bytes);
    }
  throw UsageError(expected);
}

std::string usage_text() {
  return "usage: kmini [DECK.yaml] [--set KEY=VALUE]... [--out DIR] [--quiet] [--help] [--version]\n"
         "             [--data-dir] [--dry-run [--device-memory SIZE] [--devices N]]\n"
         "       kmini describe [KERNEL] [--json | --markdown]\n"
         "             [Kokkos flags such as --kokkos-num-threads=N, checked before Kokkos starts]\n"
         "\n"
         "  DECK.yaml        input deck; without one kmini runs its built-in default\n"
         "                   deck (identical to inputs/default.yaml)\n"
         "  --set KEY=VALUE  override a deck key by its dotted path, e.g. --set stream.n=1000\n"
         "                   or --set run.kernels=[stream]; validated like the deck\n"
         "  --out DIR        where results.json and relative output paths go (default kmini-out;\n"
         "                   given at most once)\n"
         "  --quiet          no progress lines while the kernels run (gram's rounds, rk4's steps)\n"
         "  --dry-run        validate the deck and print the plan; run nothing\n"
         "  --device-memory SIZE  with --dry-run: plan for devices of SIZE (80GiB, 141GB, 8.5e10)\n"
         "                   instead of this machine's, one rank per device\n"
         "  --devices N      with --dry-run: plan for N ranks, one device each (from one process)\n"
         "  --data-dir       print the directory holding the decks (inputs/), examples/ and\n"
         "                   scripts/: share/kmini of the install, the source tree of a build\n"
         "  describe         each kernel's deck keys (type, default, unit, meaning), figure of\n"
         "                   merit and decks; --json for scripts, --markdown for the deck reference\n"
         "\n"
         "Exit status: 0 success, 1 verification or runtime failure, 2 bad usage, deck or input file.\n";
}

}  // namespace kmini
