#pragma once
// A kernel's declaration: its deck keys, its figure of merit, its decks, how
// its problem grows in a scaling study, what the benchmarks report and how to
// run it small, written once in the kernel's folder (<kernel>_declaration.cpp).
// The deck validation, `kmini describe`, the deck reference
// (docs/deck-reference.md), the Python module and the scripts all read it;
// nothing keeps a copy.
#include "deck/deck.hpp"
#include "io/json.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace kmini {

// What a kernel's run is judged by: one rate, higher is better unless said.
// results.json reports it as kernels.<name>.fom, with the roof it is measured
// against in the same run as kernels.<name>.roof.
struct FigureOfMerit {
  std::string name;    // "element_steps_per_s"
  std::string unit;    // "element-step/s"
  std::string counts;  // what one unit of work is, in one line
  std::string roof;    // the roof's name, as the summary table shows it ("stream BW")
  bool higher_is_better = true;
  Json to_json() const;
};

// How a weak-scaling study (scripts/scaling.py) grows the kernel's problem
// with the ranks: the deck key that sets its size, and how that key grows.
enum class Growth {
  Linear,  // size proportional to the ranks
  Sqrt,    // size proportional to the square root of the ranks: the work is quadratic in it
  PerRank  // the key is per rank already: kept in a weak study, divided by the ranks in a strong one
};
// "linear", "sqrt", "per_rank": the words `kmini describe --json` prints.
const char* growth_name(Growth g);

struct Scaling {
  std::string size_key;  // a declared key, below the section: "n", "A.random.rows"
  Growth growth = Growth::Linear;
  std::string why;  // one line: why the size grows so
  Json to_json(const std::string& section) const;
};

// A number the benchmark scripts report besides the figure of merit: one
// value of the kernel's results.json entry, shown as value * scale in unit.
struct Figure {
  std::string label;              // "add f64 bandwidth"
  std::vector<std::string> path;  // keys below kernels.<name>: {"ops", "add_f64", "bandwidth_bytes_per_s"}
  std::string unit;               // of the scaled value: "GB/s"
  double scale = 1.0;             // 1e-9 for B/s shown as GB/s
  Json to_json() const;
};

struct KernelDeclaration {
  std::string name;     // the deck section and the kernel's name everywhere
  std::string summary;  // one line
  std::vector<DeckKey> keys;
  FigureOfMerit fom;
  std::vector<std::string> decks;  // example decks under inputs/, relative to the source tree
  Scaling scaling;                 // empty size_key: the kernel has no scaling study (the run section)
  std::vector<Figure> figures;     // reported by scripts/bench.py besides the fom, in this order
  // `--set` overrides, full dotted keys of this kernel ("rk4.n=64"), applied to
  // the built-in default deck with run.kernels set to this kernel alone:
  // small_run finishes in seconds (checks such as compute-sanitizer, which
  // slows a run a hundredfold); profile_run is the size a profiler reads the
  // kernel at (empty: no profile setting).
  std::vector<std::string> small_run;
  std::vector<std::string> profile_run;

  // The key declared as `key` (below the section); std::logic_error if none,
  // so a reader that names an undeclared key fails on its first test.
  const DeckKey& key(std::string_view key) const;
  // Null when no key is declared so.
  const DeckKey* find(std::string_view key) const;
  Json to_json() const;
};

// The run section (run.kernels, run.verify, run.seed): read by the driver,
// described beside the kernels. `kernel_names` are the run.kernels options.
KernelDeclaration run_declaration(const std::vector<std::string>& kernel_names);

// "kmini --set 'run.kernels=[<kernel>]' --set ...": the kernel alone with
// these overrides, each argument quoted for a POSIX shell where it needs it.
std::string run_command(const std::string& kernel, const std::vector<std::string>& sets);

// Markdown for one declaration (the deck reference): its figure of merit, decks
// and run settings, and a table of its keys.
std::string declaration_markdown(const KernelDeclaration& d);

}  // namespace kmini
