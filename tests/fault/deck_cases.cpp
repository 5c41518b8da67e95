// Deck, --set and command-line families: each case bad by construction, with
// what its error line must name (the deck line and key, or the --set, or the
// option, or the file).
#include "deck_cases.hpp"
#include "case_support.hpp"
#include "deck_case_helpers.hpp"

#include <algorithm>
#include <set>

namespace kmini::fault {

namespace {

std::vector<std::string> wrong_type_forms(const KeySpec& k) {
  const std::string n0 = k.names.empty() ? "x" : k.names[0];
  switch (k.type) {
    case T::Integer: return {"abc", "12abc", "1.5", "[1, 2]", "{a: 1}", "true", "''", "~", "0.5e1x"};
    case T::Real: return {"abc", "[1.0]", "{a: 1}", "true", "1.0.0", "''", "~", "1,5"};
    case T::Boolean: return {"maybe", "2", "[true]", "{a: true}", "''", "~", "tru"};
    case T::Choice: return {"[" + n0 + "]", "{a: " + n0 + "}", "42", "''", "~"};
    case T::Text:
    case T::OutputPath: return {"[a.npy]", "{a: b.npy}", "''", "~"};
    case T::RealPair: return {"1.0", "[1]", "[1, 2, 3]", "[a, b]", "{re: 1, im: 0}", "[[1], [2]]", "''", "~"};
    case T::NameList: return {n0, "{" + n0 + ": 1}", "[[" + n0 + "]]", "[" + n0 + ", {a: 1}]", "''", "~"};
    case T::Section: return {"5", "[1, 2]", "text", "true"};
  }
  return {};
}

std::vector<std::string> bad_choice_forms(const KeySpec& k) {
  if (k.type == T::OutputPath) {
    std::vector<std::string> v;
    const std::string stem = last_of(k.path) == "path" ? "ck" : last_of(k.path);
    const bool txt_allowed = std::find(k.names.begin(), k.names.end(), ".txt") != k.names.end();
    v.push_back(stem + (txt_allowed ? ".csv" : ".txt"));  // a suffix the key does not allow
    v.push_back(stem);
    v.push_back(stem + k.names[0] + ".bak");
    std::string upper = k.names[0];
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
    v.push_back(stem + upper);
    return v;
  }
  const std::string a = k.names[0], b = k.names[1];
  std::string cap = a;
  cap[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(cap[0])));
  std::string dropped = a.substr(0, a.size() - 1);
  std::string dashed = a;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::vector<std::string> v{cap, dropped, a + b, "0", a + "s"};
  if (dashed != a) v.push_back(dashed);
  return v;
}

// A misspelling of `key` that is no key kmini knows at that level and that
// YAML reads as a plain string.
std::string typo(Rng& rng, const std::string& path) {
  static const std::set<std::string> yaml_words{"y",    "Y",     "n",    "N",    "yes",  "no", "on",   "off",
                                                "true", "false", "null", "Null", "NULL", "~",  "True", "False"};
  const std::string key = last_of(path), parent = parent_of(path);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string t = key;
    const std::size_t i = rng.below(t.size());
    switch (rng.below(7)) {
      case 0:
        if (t.size() > 1) t.erase(i, 1);
        break;
      case 1: t.insert(i, 1, t[i]); break;
      case 2:
        if (i + 1 < t.size()) std::swap(t[i], t[i + 1]);
        break;
      case 3:
        t[0] = std::isupper(static_cast<unsigned char>(t[0])) ? static_cast<char>(std::tolower(t[0]))
                                                              : static_cast<char>(std::toupper(t[0]));
        break;
      case 4: t += "s"; break;
      case 5: t.insert(i + 1 > t.size() ? t.size() : i + 1, "_"); break;
      case 6: t = t + "_" + t.substr(0, 1); break;
    }
    const std::string full = parent.empty() ? t : parent + "." + t;
    bool known = false;
    for (const auto& k : deck_keys()) known = known || k.path == full || k.path.rfind(full + ".", 0) == 0;
    if (t != key && !t.empty() && !known && !yaml_words.count(t)) return t;
  }
  return key + "_typo";
}

// Maps that must hold exactly one of their alternatives.
bool is_one_of_map(const std::string& path) {
  return path == "rk4.init.F" || path == "rk4.init.G" || path == "discount.init.mult_by" ||
         path == "discount.init.discount" || path == "gram.A" || path == "gram.B";
}

// --------------------------------------------------------------- families ----

// `per_key` values drawn from each key's bad forms, one in three given as a
// --set; keys that `applies` rejects are skipped.
template <class Forms, class Applies>
std::vector<BadCase> sampled_values(std::uint64_t seed, Forms forms_of, std::size_t per_key, const std::string& what,
                                    Applies applies) {
  Rng rng(seed);
  std::vector<BadCase> out;
  for (const auto& k : deck_keys()) {
    if (!applies(k)) continue;
    const auto forms = forms_of(k);
    for (std::size_t i : rng.sample(forms.size(), per_key))
      out.push_back(value_case(k, forms[i], rng.below(3) == 0, what));
  }
  return out;
}

std::vector<BadCase> wrong_type(std::uint64_t seed) {
  return sampled_values(seed, wrong_type_forms, 2, "wrong type", [](const auto&) { return true; });
}

std::vector<BadCase> out_of_range(std::uint64_t seed) {
  return sampled_values(seed, out_of_range_forms, 3, "out of range", [](const auto&) { return true; });
}

std::vector<BadCase> bad_choice(std::uint64_t seed) {
  return sampled_values(seed, bad_choice_forms, 3, "not one of the choices",
                        [](const auto& k) { return k.type == T::Choice || k.type == T::OutputPath; });
}

std::vector<BadCase> unknown_key(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  std::set<std::string> sections{""};
  for (const auto& k : deck_keys()) {
    if (k.type == T::Section) sections.insert(k.path);
    if (is_input_file_key(k)) continue;
    // The real key with a valid value (a one-of map keeps its alternative),
    // then the misspelt one beside it.
    DeckTree deck = base_deck();
    apply_context(deck, k);
    const std::string parent = parent_of(k.path);
    if (k.type == T::Section) {
      // A section its context requires (gram.tversky with similarity tversky) is set, too.
      if (is_one_of_map(parent) || !k.context.empty()) deck.set(k.path, k.valid);
    } else {
      deck.set(k.path, k.valid);
    }
    const std::string t = typo(rng, k.path);
    const std::string full = parent.empty() ? t : parent + "." + t;
    const std::string value = k.type == T::Section ? "{}" : k.valid;
    BadCase c;
    c.what = "misspelt key " + full + " (for " + k.path + ")";
    if (rng.below(3) == 0) {
      c.files = {deck_file(deck.text())};
      c.args = {"deck.yaml", "--set", full + "=" + value};
      c.must_name = {"--set " + full + "=", full};
      c.what += " (--set)";
    } else {
      deck.set(full, value);
      std::map<std::string, int> lines;
      c.files = {deck_file(deck.text(&lines))};
      c.args = {"deck.yaml"};
      c.must_name = {at_line(lines[full]), full};
    }
    out.push_back(c);
  }
  // A made-up key in every section (and at the top); a one-of map keeps one alternative.
  const std::map<std::string, std::pair<std::string, std::string>> alternative{
      {"rk4.init.F", {"fill", "[1, 0]"}},
      {"rk4.init.G", {"fill", "[0.25, 0]"}},
      {"discount.init.mult_by", {"arange", "{}"}},
      {"discount.init.discount", {"arange", "{}"}}};
  // Sections whose own keys are required get them, so that the made-up key is the only problem.
  const std::map<std::string, std::vector<std::pair<std::string, std::string>>> required{
      {"gram.B.random", {{"cols", "16"}}},
      {"gram.write.pairs", {{"path", "p.npy"}, {"min", "1"}}},
      {"gram.write.top_k", {{"path", "t.npy"}, {"k", "2"}}},
      {"gram.tversky", {{"alpha", "0.5"}, {"beta", "0.5"}}}};
  // Sections read only with another key's value (full paths).
  const std::map<std::string, std::vector<std::pair<std::string, std::string>>> needs{
      {"gram.tversky", {{"gram.similarity", "tversky"}}}};
  for (const auto& s : sections) {
    DeckTree deck = base_deck();
    if (auto it = alternative.find(s); it != alternative.end()) deck.set(s + "." + it->second.first, it->second.second);
    if (auto it = required.find(s); it != required.end())
      for (const auto& [key, value] : it->second) deck.set(s + "." + key, value);
    if (auto it = needs.find(s); it != needs.end())
      for (const auto& [path, value] : it->second) deck.set(path, value);
    const std::string full = s.empty() ? "bogus" : s + ".bogus_key";
    deck.set(full, "1");
    std::map<std::string, int> lines;
    BadCase c;
    c.what = "made-up key " + full;
    c.files = {deck_file(deck.text(&lines))};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(lines[full]), full};
    out.push_back(c);
  }
  return out;
}

std::vector<BadCase> unknown_kernel(std::uint64_t seed) {
  Rng rng(seed);
  const KeySpec& kernels = *find_key("run.kernels");
  const KeySpec& ops = *find_key("stream.ops");
  std::vector<BadCase> out;
  for (const std::string v :
       {"[strem]", "[stream, rk5]", "[Stream]", "[gramm]", "['gram ']", "[discount, '']", "[rk4, stream, bogus]",
        "[STREAM]", "[stream-add]", "[rk4, discount, gram, stream, x]", "[gram, gram2]", "[' stream']"})
    out.push_back(value_case(kernels, v, rng.below(3) == 0, "unknown kernel"));
  for (const std::string v : {"[add, mul]", "[Add]", "[exp, copy]", "[add, exp, triad]", "[]"})
    out.push_back(value_case(ops, v, rng.below(3) == 0, "unknown or no stream op"));
  return out;
}

}  // namespace

std::vector<Family> deck_families() {
  // Values and keys (here), syntax (deck_syntax_cases.cpp), inputs and limits (deck_input_cases.cpp).
  std::vector<Family> f = {
      {"deck.wrong_type", Where::InProcess, wrong_type},         {"deck.out_of_range", Where::InProcess, out_of_range},
      {"deck.bad_choice", Where::InProcess, bad_choice},         {"deck.unknown_key", Where::InProcess, unknown_key},
      {"deck.unknown_kernel", Where::InProcess, unknown_kernel},
  };
  for (const auto& more : {deck_syntax_families(), deck_input_families()}) f.insert(f.end(), more.begin(), more.end());
  return f;
}

}  // namespace kmini::fault
