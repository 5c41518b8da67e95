// The fault.deck_key_rules fixture: what every deck key accepts, read from the
// code that checks it. For each key sample the base deck with that value set
// is configured in this process (configure_all, as a run does first), and the
// rules the deck's accessors recorded (KeyRule) are written, one line per key,
// for deck_keys() in both fault executables.
#include "deck_key_rules_writer.hpp"
#include "case_support.hpp"
#include "core/errors.hpp"
#include "deck/deck.hpp"
#include "driver/kernels.hpp"
#include "in_process.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>

namespace kmini::fault {

namespace {

RuleFields fields_of(const KeyRule& r) {
  RuleFields f;
  f.kind = kind_name(r.kind);
  f.min = r.min;
  f.max = r.max;
  f.min_exclusive = r.min_exclusive;
  f.count = r.count;
  f.options = r.options;
  return f;
}

}  // namespace

int write_deck_key_rules(const std::string& file) {
  std::map<std::string, RuleFields> all;
  for (const auto& sample : key_samples()) {
    DeckTree tree = base_deck();
    for (const auto& [path, value] : sample.context) {
      if (value.empty()) tree.remove(path);
      else tree.set(path, value);
    }
    tree.set(sample.path, sample.probe_value());
    Deck deck = Deck::from_text(tree.text(), "key sample " + sample.path);
    auto kernels = make_all_kernels();
    try {
      configure_all(deck, kernels, environment());
    } catch (const UsageError&) {
      // An input file that is not there: its key was read before the failure.
    }
    const auto own = deck.rules().find(sample.path);
    if (own == deck.rules().end()) {
      std::cerr << "deck key rules: configure did not read " << sample.path << " = " << sample.probe_value() << "\n";
      return 1;
    }
    for (const auto& [path, rule] : deck.rules()) all.emplace(path, fields_of(rule));
    all[sample.path] = fields_of(own->second);  // the rule under the sample's own context
    all[sample.path].sampled = true;
  }
  const std::string partial = file + ".partial";
  {
    std::ofstream out(partial);
    for (const auto& [path, r] : all) out << key_rule_line(path, r);
    if (!out) {
      std::cerr << "deck key rules: cannot write " << partial << "\n";
      return 1;
    }
  }
  if (std::rename(partial.c_str(), file.c_str()) != 0) {
    std::cerr << "deck key rules: cannot rename " << partial << " to " << file << "\n";
    return 1;
  }
  std::cout << "deck key rules: " << all.size() << " keys (" << key_samples().size() << " sampled) in " << file << "\n";
  return 0;
}

}  // namespace kmini::fault
