#pragma once
// A kernel's declaration: its deck keys, its figure of merit and its decks,
// written once in the kernel's folder (<kernel>_declaration.cpp). The deck
// validation, `kmini describe`, the deck reference (docs/deck-reference.md),
// the Python module and the scripts all read it; nothing keeps a copy.
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

struct KernelDeclaration {
  std::string name;     // the deck section and the kernel's name everywhere
  std::string summary;  // one line
  std::vector<DeckKey> keys;
  FigureOfMerit fom;
  std::vector<std::string> decks;  // example decks under inputs/, relative to the source tree

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

// Markdown for one declaration: a table of its keys (the deck reference).
std::string declaration_markdown(const KernelDeclaration& d);

}  // namespace kmini
