#pragma once
// kmini [DECK.yaml] [--set KEY=VALUE]... [--out DIR] [--dry-run] [--help] [--version] [--kokkos-*]
// kmini describe [KERNEL] [--json | --markdown]
#include <string>
#include <vector>

namespace kmini {

struct CommandLine {
  std::string deck;  // empty: the built-in default deck
  std::vector<std::string> sets;
  std::string out_dir = "kmini-out";
  bool dry_run = false;
  bool help = false;
  bool version = false;
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

}  // namespace kmini
