#pragma once
// kmini [DECK.yaml] [--set KEY=VALUE]... [--out DIR] [--quiet] [--dry-run [--device-memory SIZE] [--devices N]]
//       [--help] [--version] [--data-dir] [--kokkos-*]
// kmini describe [KERNEL] [--json | --markdown]
#include <cstdint>
#include <string>
#include <vector>

namespace kmini {

struct CommandLine {
  std::string deck;  // empty: the built-in default deck
  std::vector<std::string> sets;
  std::string out_dir = "kmini-out";
  bool dry_run = false;
  bool quiet = false;               // --quiet: no progress lines while kernels run
  std::uint64_t device_memory = 0;  // --device-memory: plan for a device of this many bytes (0: this machine's)
  int devices = 0;                  // --devices: plan for this many ranks, one device each (0: the ranks running)
  bool help = false;
  bool version = false;
  bool data_dir = false;  // --data-dir: print where the decks and scripts are (driver/data_dir.hpp)
  // kmini describe [KERNEL] [--json | --markdown]: the kernels' declarations.
  bool describe = false;
  std::string describe_kernel;           // empty: every kernel
  std::string describe_format = "text";  // text, json or markdown
};

// Throws UsageError for unknown options, missing values and a repeated --out.
// Kokkos' own --kokkos-* flags are skipped (Environment checked them and
// Kokkos::initialize has read them).
CommandLine parse_command_line(int argc, const char* const* argv);

std::string usage_text();

// "80GiB", "141 GB", "8.5e10" in bytes (GiB, MiB, KiB, TiB binary; GB, MB,
// kB, TB decimal; B or nothing: bytes). Throws UsageError naming `option`.
std::uint64_t parse_byte_size(const std::string& option, const std::string& text);

}  // namespace kmini
