#pragma once
// What the deck families (deck_cases.cpp, deck_syntax_cases.cpp) share: the
// deck file of a case, its line prefix, and the out-of-range forms of a key.
#include "bad_input_cases.hpp"
#include "case_support.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace kmini::fault {

using T = KeyType;

inline CaseFile deck_file(const std::string& text) { return CaseFile{"deck.yaml", text, false}; }

inline std::string at_line(int line) { return "deck.yaml:" + std::to_string(line) + ":"; }

// A key read only beside an input file (which does not exist here) has no
// valid value: the families that need one skip it.
inline bool is_input_file_key(const KeySpec& k) { return k.valid.empty(); }

inline std::string number_text(double v) {
  // Integers exactly, the rest as %g would lose digits: only ranges used here.
  if (v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

inline std::vector<std::string> out_of_range_forms(const KeySpec& k) {
  std::vector<std::string> v;
  if (k.type == T::Integer) {
    if (k.min >= 1) v.insert(v.end(), {"0", "-1"});
    else v.insert(v.end(), {"-1", "-7"});
    v.push_back("-9223372036854775808");
    if (k.has_max) v.insert(v.end(), {number_text(k.max + 1), number_text(k.max * 10)});
    v.insert(v.end(), {"9223372036854775808", "18446744073709551616", "1e19", "1e400", "-1e400", ".nan", ".inf",
                       "-.inf", "nan", "inf"});
  } else if (k.type == T::Real) {
    if (k.min_exclusive && k.min == 0) v.insert(v.end(), {"0", "0.0", "-0.0", "-1e-300", "-5"});
    else if (k.min == 0) v.insert(v.end(), {"-1e-300", "-1"});
    if (k.max == 1) v.insert(v.end(), {"1.0000001", "2"});
    if (k.max == 1e18) v.insert(v.end(), {"1.5e18", "1e19"});
    v.insert(v.end(), {".nan", ".NaN", "nan", ".inf", "-.inf", "1e400", "-1e400"});
  } else if (k.type == T::RealPair) {
    v = {"[.nan, 0]", "[0, .inf]", "[1e400, 0]", "[0, -.inf]", "[nan, 0]"};
  }
  return v;
}

// A case whose bad `value` for key `k` comes from the deck, or from --set.
inline BadCase value_case(const KeySpec& k, const std::string& value, bool via_set, const std::string& what,
                          DeckTree deck = base_deck()) {
  apply_context(deck, k);
  BadCase c;
  c.what = what + ": " + k.path + " = " + (value.size() > 60 ? value.substr(0, 60) + "..." : value) +
           (via_set ? " (--set)" : "");
  if (via_set) {
    c.files = {deck_file(deck.text())};
    c.args = {"deck.yaml", "--set", k.path + "=" + value};
    c.must_name = {"--set " + k.path + "=", k.path};
  } else {
    deck.set(k.path, value);
    std::map<std::string, int> lines;
    c.files = {deck_file(deck.text(&lines))};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(lines[k.path]), k.path};
  }
  return c;
}

}  // namespace kmini::fault
