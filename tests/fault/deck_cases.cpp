// Deck, --set and command-line families: each case bad by construction, with
// what its error line must name (the deck line and key, or the --set, or the
// option, or the file).
#include "deck_cases.hpp"
#include "case_support.hpp"

#include <algorithm>
#include <set>

namespace kmini::fault {

namespace {

using T = KeyType;

CaseFile deck_file(const std::string& text) { return CaseFile{"deck.yaml", text, false}; }

std::string at_line(int line) { return "deck.yaml:" + std::to_string(line) + ":"; }

// A case whose bad `value` for key `k` comes from the deck, or from --set.
BadCase value_case(const KeySpec& k, const std::string& value, bool via_set, const std::string& what,
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

bool is_input_file_key(const KeySpec& k) { return k.type == T::Text && k.valid.empty(); }

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

std::string number_text(double v) {
  // Integers exactly, the rest as %g would lose digits: only ranges used here.
  if (v == static_cast<double>(static_cast<long long>(v))) return std::to_string(static_cast<long long>(v));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::vector<std::string> out_of_range_forms(const KeySpec& k) {
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

std::vector<std::string> bad_choice_forms(const KeySpec& k) {
  if (k.type == T::OutputPath) {
    std::vector<std::string> v;
    const std::string stem = last_of(k.path) == "path" ? "ck" : last_of(k.path);
    v.push_back(stem + ".txt");
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
      if (is_one_of_map(parent)) deck.set(k.path, k.valid);
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
      {"gram.write.top_k", {{"path", "t.npy"}, {"k", "2"}}}};
  for (const auto& s : sections) {
    DeckTree deck = base_deck();
    if (auto it = alternative.find(s); it != alternative.end()) deck.set(s + "." + it->second.first, it->second.second);
    if (auto it = required.find(s); it != required.end())
      for (const auto& [key, value] : it->second) deck.set(s + "." + key, value);
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

// Invalid YAML made from the base deck's text.
std::vector<BadCase> malformed_yaml(std::uint64_t seed) {
  Rng rng(seed);
  const std::string base = base_deck().text();
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < base.size();) {
    const auto nl = base.find('\n', start);
    lines.push_back(base.substr(start, nl - start));
    start = nl + 1;
  }
  auto join = [](const std::vector<std::string>& ls) {
    std::string s;
    for (const auto& l : ls) s += l + "\n";
    return s;
  };
  // Indices of lines of a given form.
  std::vector<std::size_t> indented, flow_seq, scalar_value, first_children, later_children;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto& l = lines[i];
    const bool ind = l.rfind("  ", 0) == 0;
    if (ind) indented.push_back(i);
    if (l.find('[') != std::string::npos) flow_seq.push_back(i);
    if (ind && l.back() != ':' && l.find('[') == std::string::npos) scalar_value.push_back(i);
    if (ind && i > 0) {
      const auto depth = [](const std::string& s) { return s.find_first_not_of(' '); };
      (depth(lines[i - 1]) < depth(l) ? first_children : later_children).push_back(i);
    }
  }
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, const std::string& text) {
    BadCase c;
    c.what = what;
    c.files = {deck_file(text)};
    c.args = {"deck.yaml"};
    c.must_name = {"deck.yaml:"};
    out.push_back(c);
  };
  for (std::size_t i : rng.sample(indented.size(), 4)) {  // YAML forbids tabs in indentation
    auto ls = lines;
    const std::size_t idx = indented[i];
    ls[idx] = "\t" + ls[idx].substr(2);
    add("tab for indentation on line " + std::to_string(idx + 1), join(ls));
  }
  for (std::size_t i : rng.sample(later_children.size(), 3)) {  // one space more than its siblings
    auto ls = lines;
    ls[later_children[i]] = " " + ls[later_children[i]];
    add("line " + std::to_string(later_children[i] + 1) + " indented one space more than its siblings", join(ls));
  }
  for (std::size_t i : rng.sample(later_children.size(), 3)) {  // one space less
    auto ls = lines;
    ls[later_children[i]] = ls[later_children[i]].substr(1);
    add("line " + std::to_string(later_children[i] + 1) + " indented one space less than its siblings", join(ls));
  }
  for (std::size_t i : flow_seq) {  // unclosed flow sequence
    auto ls = lines;
    ls[i].erase(ls[i].rfind(']'), 1);
    add("unclosed '[' on line " + std::to_string(i + 1), join(ls));
  }
  {
    auto ls = lines;
    ls.push_back("extra: {a: 1, b: [2, 3]");
    add("unclosed '{' on the last line", join(ls));
  }
  for (std::size_t i : rng.sample(flow_seq.size(), 2)) {  // stray closing bracket after a flow sequence
    auto ls = lines;
    ls[flow_seq[i]] += rng.below(2) ? "]" : "}";
    add("stray closing bracket on line " + std::to_string(flow_seq[i] + 1), join(ls));
  }
  for (std::size_t i : rng.sample(scalar_value.size(), 2)) {  // a second ': ' in a plain value
    auto ls = lines;
    ls[scalar_value[i]] += ": 5";
    add("'key: value: 5' on line " + std::to_string(scalar_value[i] + 1), join(ls));
  }
  for (std::size_t i : rng.sample(later_children.size(), 2)) {  // missing ':' before a following key
    auto ls = lines;
    auto& l = ls[later_children[i]];
    if (l.back() == ':') continue;
    l.erase(l.find(':'), 1);
    add("missing ':' on line " + std::to_string(later_children[i] + 1), join(ls));
  }
  for (std::size_t i : rng.sample(scalar_value.size(), 2)) {  // alias of an anchor never defined
    auto ls = lines;
    auto& l = ls[scalar_value[i]];
    l = l.substr(0, l.find(':') + 1) + " *undefined_anchor";
    add("undefined alias on line " + std::to_string(scalar_value[i] + 1), join(ls));
  }
  for (std::size_t i : rng.sample(later_children.size(), 2)) {  // a sequence entry inside a map
    auto ls = lines;
    const auto depth = ls[later_children[i]].find_first_not_of(' ');
    ls.insert(ls.begin() + static_cast<long>(later_children[i]) + 1, std::string(depth, ' ') + "- item");
    add("'- item' inside a map after line " + std::to_string(later_children[i] + 1), join(ls));
  }
  {  // The last line of the deck (gram.write is printed last).
    DeckTree d = base_deck();
    d.set("gram.write.C", "\"C.npy");
    add("unterminated double quote at the end of the deck", d.text());
  }
  {
    DeckTree d = base_deck();
    d.set("rk4.write", "{F: 'F.npy}");
    add("unterminated single quote inside a flow map", d.text());
  }
  {  // YAML allows no C0 control characters but tab, LF and CR.
    DeckTree d = base_deck();
    d.set("rk4.write.F", std::string("\"F\x01.npy\""));
    add("control character U+0001 in a quoted value", d.text());
  }
  {
    DeckTree d = base_deck();
    d.set("rk4.write.F", "\"F\\q.npy\"");
    add("unknown escape \\q in a double-quoted value", d.text());
  }
  add("mismatched brackets", join(lines) + "extra: {a: [1, 2}]\n");
  add("only an unclosed '['", "[\n");
  // Valid YAML that is no deck: the root is not a map.
  add("root is a sequence", "- run\n- stream\n");
  add("root is a scalar", "just some text\n");
  add("root is a number", "42\n");
  add("root is a flow sequence of maps", "[{run: {kernels: [stream]}}]\n");
  return out;
}

std::vector<BadCase> duplicate_key(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<const KeySpec*> scalars;
  for (const auto& k : deck_keys())
    if (k.type != T::Section && !is_input_file_key(k) && !out_of_range_forms(k).empty()) scalars.push_back(&k);
  std::vector<BadCase> out;
  auto dup_case = [&](const KeySpec& k, const std::string& first, const std::string& second, const std::string& what) {
    DeckTree deck = base_deck();
    apply_context(deck, k);
    deck.set(k.path, first);
    deck.add_duplicate(parent_of(k.path), last_of(k.path), second);
    std::multimap<std::string, int> all;
    BadCase c;
    c.what = what + ": " + k.path + ": " + first + " then " + second;
    c.files = {deck_file(deck.text(nullptr, &all))};
    c.args = {"deck.yaml"};
    const auto range = all.equal_range(k.path);
    int second_line = 0;
    for (auto it = range.first; it != range.second; ++it) second_line = std::max(second_line, it->second);
    c.must_name = {at_line(second_line), k.path};
    out.push_back(c);
  };
  for (std::size_t i : rng.sample(scalars.size(), 8)) {  // valid first, bad second: first-wins hides it
    const KeySpec& k = *scalars[i];
    dup_case(k, k.valid, rng.pick(out_of_range_forms(k)), "duplicate key, valid then bad");
  }
  for (std::size_t i : rng.sample(scalars.size(), 4)) {
    const KeySpec& k = *scalars[i];
    dup_case(k, rng.pick(out_of_range_forms(k)), k.valid, "duplicate key, bad then valid");
  }
  for (std::size_t i : rng.sample(scalars.size(), 4)) {
    const KeySpec& k = *scalars[i];
    dup_case(k, k.valid, k.valid, "duplicate key, same value twice");
  }
  // Duplicates inside one flow map.
  for (const auto& [section, text, key] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"stream", "{n: 1000, repeat: 1, n: 5}", "stream.n"},
           {"gram.A", "{random: {rows: 8, cols: 16, rows: 9}}", "gram.A.random.rows"},
           {"rk4.init", "{F: {fill: [1, 0]}, F: {fill: [2, 0]}}", "rk4.init.F"}}) {
    DeckTree deck = base_deck();
    deck.set(section, text);
    std::map<std::string, int> lines;
    BadCase c;
    c.what = "duplicate key in a flow map: " + section + ": " + text;
    c.files = {deck_file(deck.text(&lines))};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(lines[section]), key};
    out.push_back(c);
  }
  // The same section twice (block maps), and nested maps twice.
  for (const std::string s : {"stream", "rk4", "discount", "gram", "run"}) {
    DeckTree deck = base_deck();
    deck.add_duplicate("", s, "");
    std::multimap<std::string, int> all;
    std::string text = deck.text(nullptr, &all);
    BadCase c;
    c.what = "section " + s + " twice (the second empty)";
    int second_line = 0;
    for (auto [it, end] = all.equal_range(s); it != end; ++it) second_line = std::max(second_line, it->second);
    c.files = {deck_file(text)};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(second_line), s};
    out.push_back(c);
  }
  for (const auto& [section, key, value] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"stream", "repeat", "3"}, {"rk4", "steps", "1"}, {"gram", "repeat", "2"}}) {
    DeckTree deck = base_deck();
    deck.add_duplicate("", section, "");
    std::string text = deck.text();
    text += "  " + key + ": " + value + "\n";  // fills the second, empty section
    text.replace(text.rfind(section + ": {}"), section.size() + 4, section + ":");
    int second_line = 0, line = 1;
    for (std::size_t pos = 0; pos < text.size(); pos = text.find('\n', pos) + 1, ++line)
      if (text.compare(pos, section.size() + 1, section + ":") == 0) second_line = line;
    BadCase c;
    c.what = "section " + section + " twice, the second setting " + key + ": " + value;
    c.files = {deck_file(text)};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(second_line), section};
    out.push_back(c);
  }
  return out;
}

std::vector<BadCase> multi_document(std::uint64_t) {
  const std::string base = base_deck().text();
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, const std::string& text) {
    BadCase c;
    c.what = what;
    c.files = {deck_file(text)};
    c.args = {"deck.yaml"};
    const auto sets = safety_sets();
    c.args.insert(c.args.end(), sets.begin(), sets.end());
    c.must_name = {"deck.yaml:"};
    out.push_back(c);
  };
  add("a second document naming a bogus kernel", base + "---\nrun: {kernels: [bogus]}\n");
  add("two empty documents, then a bogus one (issue 9)", "---\n---\nrun: {kernels: [bogus]}\n");
  add("the base deck twice, each with ---", "---\n" + base + "---\n" + base);
  add("document end ... then a second document", base + "...\n---\nstream: {n: 5}\n");
  add("an empty flow map as a second document", "---\n" + base + "--- \n{}\n");
  add("two trailing empty documents", base + "---\n---\n");
  add("a second document with only a comment and a section", base + "---\n# more\nrun: {kernels: [stream]}\n");
  add("%YAML directive, then two documents", "%YAML 1.2\n---\n" + base + "---\nstream: {n: 7}\n");
  const auto split_at = [&](const std::string& section) {
    const auto pos = base.find("\n" + section + ":");
    return base.substr(0, pos + 1) + "---\n" + base.substr(pos + 1);
  };
  add("--- between sections run/stream and the rest", split_at("rk4"));
  add("--- before the gram section", split_at("gram"));
  return out;
}

std::vector<BadCase> set_form(std::uint64_t) {
  const std::string base = base_deck().text();
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, std::vector<std::string> set_args, std::vector<std::string> names) {
    BadCase c;
    c.what = what;
    c.files = {deck_file(base)};
    c.args = {"deck.yaml"};
    c.args.insert(c.args.end(), set_args.begin(), set_args.end());
    c.must_name = std::move(names);
    out.push_back(c);
  };
  add("no '='", {"--set", "stream.n"}, {"--set stream.n"});
  add("no '=', as --set=", {"--set=stream.n"}, {"--set stream.n"});
  add("empty key", {"--set", "=5"}, {"--set =5"});
  add("empty value", {"--set", "stream.n="}, {"--set stream.n="});
  add("trailing dot in the key (issue 9)", {"--set", "rk4.n.=5"}, {"--set rk4.n.=5"});
  add("leading dot in the key", {"--set", ".rk4.n=5"}, {"--set .rk4.n=5"});
  add("empty component in the key", {"--set", "rk4..n=5"}, {"--set rk4..n=5"});
  add("only a dot as the key", {"--set", ".=5"}, {"--set .=5"});
  add("unclosed '[' in the value", {"--set", "stream.ops=[add,"}, {"--set stream.ops="});
  add("unclosed '{' in the value", {"--set", "rk4.init.F={fill: [1, 0]"}, {"--set rk4.init.F="});
  add("unterminated quote in the value", {"--set", "rk4.write.F=\"F.npy"}, {"--set rk4.write.F="});
  add("value with a newline and a second document (issue 9)", {"--set", "stream.n=1000\n---\nrun: {kernels: [bogus]}"},
      {"--set stream.n=", "stream.n"});
  add("value with a newline and a second key", {"--set", "stream.n=1000\nrepeat: 5"}, {"--set stream.n="});
  add("unknown section (issue 9: blamed on the deck)", {"--set", "bogus.x=1"}, {"--set bogus.x=1", "bogus"});
  add("unknown key in a section", {"--set", "stream.bogus=1"}, {"--set stream.bogus=1", "stream.bogus"});
  add("a key below a scalar", {"--set", "stream.n.x=1"}, {"--set stream.n.x=1"});
  add("a section replaced by a scalar", {"--set", "stream=5"}, {"--set stream=5", "stream"});
  add("space before '='", {"--set", "stream.n =5"}, {"--set stream.n =5"});
  add("space before the key", {"--set", " stream.n=5"}, {"--set  stream.n=5"});
  add("capitalised section", {"--set", "Stream.n=5"}, {"--set Stream.n=5", "Stream"});
  add("bogus kernel", {"--set", "run.kernels=[bogus]"}, {"--set run.kernels=", "run.kernels"});
  add("--set without its value (last argument)", {"--set"}, {"--set"});
  out.back().own_out = true;  // nothing after it
  add("--set= with nothing", {"--set="}, {"--set"});
  return out;
}

std::vector<BadCase> cli_args(std::uint64_t) {
  const std::string base = base_deck().text();
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, std::vector<std::string> args, std::vector<std::string> names,
                 std::vector<std::string> outs = {}, std::vector<CaseFile> extra = {}) {
    BadCase c;
    c.what = what;
    c.files = {deck_file(base)};
    c.files.insert(c.files.end(), extra.begin(), extra.end());
    c.args = std::move(args);
    c.must_name = std::move(names);
    if (!outs.empty()) {
      c.own_out = true;
      c.out_dirs = outs;
    }
    out.push_back(c);
  };
  add("two --out options (issue 9)", {"deck.yaml", "--out", "out", "--out", "out2"}, {"--out"}, {"out", "out2"});
  add("two --out options, = and space forms", {"deck.yaml", "--out=out", "--out", "out2"}, {"--out"}, {"out", "out2"});
  add("the same --out twice", {"deck.yaml", "--out", "out", "--out", "out"}, {"--out"}, {"out"});
  add("two --out options with --dry-run", {"deck.yaml", "--dry-run", "--out", "out", "--out", "out2"}, {"--out"},
      {"out", "out2"});
  add("--out without its value (last argument)", {"deck.yaml", "--out"}, {"--out"}, {"out"});
  add("--out= with nothing", {"deck.yaml", "--out="}, {"--out"}, {"out"});
  add("--out names an existing file", {"deck.yaml", "--out", "afile"}, {"afile"}, {"out"},
      {CaseFile{"afile", "keep me\n", false}});
  add("--out below an existing file", {"deck.yaml", "--out", "afile/sub"}, {"afile/sub"}, {"out"},
      {CaseFile{"afile", "keep me\n", false}});
  add("unknown option", {"deck.yaml", "--bogus"}, {"--bogus"});
  add("unknown short option", {"deck.yaml", "-x"}, {"'-x'"});
  add("misspelt option --dry_run", {"deck.yaml", "--dry_run"}, {"--dry_run"});
  add("misspelt option --outdir=", {"deck.yaml", "--outdir=o"}, {"--outdir"});
  add("two decks", {"deck.yaml", "other.yaml"}, {"other.yaml"}, {}, {CaseFile{"other.yaml", base, false}});
  add("missing deck file", {"missing.yaml"}, {"missing.yaml"});
  add("a directory as the deck (issue 9: exit 1)", {"adir"}, {"adir"}, {}, {CaseFile{"adir", "", true}});
  add("an unreadable deck path below a file", {"afile/deck.yaml"}, {"afile/deck.yaml"}, {},
      {CaseFile{"afile", "not a directory\n", false}});
  return out;
}

// Input files named in the deck that are missing or are directories.
std::vector<BadCase> missing_input(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  for (const std::string key : {"rk4.init.F.file", "rk4.init.G.file", "discount.init.mult_by.file",
                                "discount.init.discount.file", "gram.A.file", "rk4.restart"}) {
    const KeySpec& k = *find_key(key);
    for (const std::string name : {"nope.npy", "indir"}) {
      BadCase c = value_case(k, name, rng.below(2) == 0, name == "indir" ? "a directory as input" : "missing input");
      if (name == "indir") c.files.push_back(CaseFile{"indir", "", true});
      c.must_name.push_back(name);
      out.push_back(c);
    }
  }
  return out;
}

// Valid .npy files of the wrong dtype or shape for the key that reads them.
std::vector<BadCase> wrong_input(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  auto file_of = [](const std::string& descr, const std::vector<std::int64_t>& shape) {
    std::int64_t count = 1;
    for (auto d : shape) count *= d;
    NpyParts p;
    p.descr = descr;
    p.shape = shape_text(shape);
    return npy_file(p, std::string(static_cast<std::size_t>(count) * descr_item_size(descr), '\0'));
  };
  struct Wrong {
    std::string key, descr;
    std::vector<std::int64_t> shape;
    std::vector<std::pair<std::string, std::string>> context;
  };
  const std::vector<Wrong> wrongs = {
      {"gram.A.file", "<f8", {8, 16}, {}},
      {"gram.A.file", "<i4", {8, 16}, {}},
      {"gram.A.file", "<c8", {8, 16}, {}},
      {"gram.A.file", "|u1", {16}, {}},
      {"gram.A.file", "|u1", {2, 4, 4}, {}},
      {"gram.A.file", "|u1", {0, 16}, {}},
      {"gram.A.file", "|u1", {8, 0}, {}},
      {"gram.A.file", "|b1", {8, 2}, {{"gram.A.packed", "true"}, {"gram.A.cols", "16"}}},
      {"gram.A.file", "|u1", {8, 3}, {{"gram.A.packed", "true"}, {"gram.A.cols", "16"}}},
      {"rk4.init.F.file", "<c8", {4, 4}, {}},
      {"rk4.init.F.file", "<f8", {8, 8}, {}},
      {"rk4.init.F.file", "<c8", {8, 8, 1}, {}},
      {"rk4.init.F.file", "<c16", {8, 9}, {}},
      {"rk4.init.G.file", "<i8", {8, 8}, {}},
      {"rk4.init.G.file", "<c8", {64}, {}},
      {"discount.init.mult_by.file", "<i4", {3, 2}, {}},
      {"discount.init.mult_by.file", "<c8", {3, 2}, {}},
      {"discount.init.mult_by.file", "<f8", {2, 3}, {}},
      {"discount.init.mult_by.file", "<f8", {3, 2, 1}, {}},
      {"discount.init.mult_by.file", "|u1", {3, 2}, {}},
      {"discount.init.discount.file", "<f8", {2, 3, 3}, {}},
      {"discount.init.discount.file", "<f4", {2, 3}, {}},
      {"discount.init.discount.file", "<c16", {2, 3, 2}, {}},
      {"discount.init.discount.file", "|b1", {2, 3, 2}, {}},
      {"rk4.restart", "<c8", {2, 2}, {}},
      {"rk4.restart", "<c16", {2, 2}, {}},
      {"rk4.restart", "<c16", {6, 2}, {}},
      {"rk4.restart", "<f8", {8, 2}, {}},
  };
  for (const auto& w : wrongs) {
    const KeySpec& k = *find_key(w.key);
    DeckTree deck = base_deck();
    for (const auto& [p, v] : w.context) deck.set(p, v);
    const std::string name = "in_" + w.descr.substr(1) + "_" + std::to_string(w.shape.size()) + "d.npy";
    BadCase c = value_case(k, name, rng.below(2) == 0,
                           "a valid " + w.descr + " " + shape_text(w.shape) + " file, wrong for the key", deck);
    c.files.push_back(CaseFile{name, file_of(w.descr, w.shape), false});
    c.must_name.push_back(name);
    out.push_back(c);
  }
  return out;
}

// Values fine alone, bad together.
std::vector<BadCase> cross_key(std::uint64_t) {
  std::vector<BadCase> out;
  auto add = [&](const std::string& what, std::vector<std::pair<std::string, std::string>> sets,
                 const std::string& named_key, const std::string& line_key, std::vector<CaseFile> extra = {}) {
    DeckTree deck = base_deck();
    for (const auto& [p, v] : sets) {
      if (v.empty()) deck.remove(p);
      else deck.set(p, v);
    }
    std::map<std::string, int> lines;
    BadCase c;
    c.what = what;
    c.files = {deck_file(deck.text(&lines))};
    c.files.insert(c.files.end(), extra.begin(), extra.end());
    c.args = {"deck.yaml"};
    // A block map's position is its first key's line: accept the key's line or the next.
    c.must_name = {at_line(lines[line_key]) + "||" + at_line(lines[line_key] + 1), named_key};
    out.push_back(c);
  };
  add("discount.write.reduced while discount.reduce is none", {{"discount.write.reduced", "r.npy"}},
      "discount.write.reduced", "discount.write.reduced");
  // The budget and the slice disagree: either line, and the budget, named.
  for (const std::string budget : {"1", "100"}) {
    add("gram.memory_budget of " + budget + " bytes with an explicit row_slice (issue 9: ignored)",
        {{"gram.memory_budget", budget}}, "memory_budget", "gram.memory_budget");
    std::map<std::string, int> lines;
    base_deck().text(&lines);
    out.back().must_name.front() += "||" + at_line(lines["gram.row_slice"]);
  }
  add("rk4.init.F with fill and random", {{"rk4.init.F.fill", "[1, 0]"}, {"rk4.init.F.random.seed", "1"}}, "rk4.init.F",
      "rk4.init.F");
  add("rk4.init.G with none of fill/file/random", {{"rk4.init.G", "{}"}}, "rk4.init.G", "rk4.init.G");
  add("discount.init.mult_by with arange and random",
      {{"discount.init.mult_by.arange", "{}"}, {"discount.init.mult_by.random.seed", "1"}}, "discount.init.mult_by",
      "discount.init.mult_by");
  add("gram.A with file and random", {{"gram.A.file", "A.npy"}}, "gram.A", "gram.A");
  NpyParts packed;
  packed.descr = "|u1";
  packed.shape = "(8, 2)";
  add("gram.A packed without cols", {{"gram.A.random", ""}, {"gram.A.file", "packed.npy"}, {"gram.A.packed", "true"}},
      "gram.A.cols", "gram.A", {CaseFile{"packed.npy", npy_file(packed, std::string(16, '\0')), false}});
  return out;
}

// Long values, keys and names: the line must stay short (values cut to ~80).
std::vector<BadCase> long_value(std::uint64_t seed) {
  Rng rng(seed);
  std::vector<BadCase> out;
  std::string list = "[";
  for (int i = 0; i < 2000; ++i) list += i ? ", 1" : "1";
  list += "]";
  const std::string word(5000, 'x');
  const std::string digits(3000, '7');
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"stream.n", word},
           {"stream.n", digits},
           {"rk4.dt", list},
           {"rk4.coupling", word},
           {"run.kernels", "[" + word + "]"},
           {"gram.write.C", list},
           {"rk4.write.F", word + ".txt"},
           {"discount.precision", "{" + std::string(900, 'x') + ": 1}"},  // YAML keys stop at 1024 characters
           {"rk4.init.F.fill", list},
       })
    out.push_back(value_case(*find_key(key), value, rng.below(3) == 0, "a long value"));
  {  // A long unknown key: the line names it, cut.
    DeckTree deck = base_deck();
    const std::string key = "stream." + std::string(400, 'k');
    deck.set(key, "1");
    std::map<std::string, int> lines;
    BadCase c;
    c.what = "a 400-character unknown key in stream";
    c.files = {deck_file(deck.text(&lines))};
    c.args = {"deck.yaml"};
    c.must_name = {at_line(lines[key]), "stream.kkkk"};
    out.push_back(c);
  }
  {  // A long --set that is not KEY=VALUE.
    BadCase c;
    c.what = "a 3000-character --set without '='";
    c.files = {deck_file(base_deck().text())};
    c.args = {"deck.yaml", "--set", "stream." + std::string(3000, 'n')};
    c.must_name = {"--set stream.nnnn"};
    out.push_back(c);
  }
  {  // A long missing deck name.
    BadCase c;
    c.what = "a 250-character missing deck name";
    c.args = {std::string(250, 'd') + ".yaml"};
    c.must_name = {"dddddddddd"};
    out.push_back(c);
  }
  return out;
}

// Sizes the README allows that no machine holds (issue 9, item 3): crash or
// hang today, so only through the real binary.
std::vector<BadCase> oversize(std::uint64_t) {
  std::vector<BadCase> out;
  for (const auto& [key, value, kernels] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"stream.n", "4611686018427387904", "[stream]"},
           {"stream.n", "9223372036854775807", "[stream]"},
           {"stream.n", "1e18", "[stream]"},
           {"rk4.steps", "1152921504606846976", "[rk4]"},
           {"rk4.n", "2097152", "[rk4]"},
           {"gram.A.random.rows", "2147483647", "[gram]"},
           {"discount.dates", "1000000000", "[discount]"},
       }) {
    DeckTree deck = base_deck();
    deck.set("run.kernels", kernels);
    BadCase c = value_case(*find_key(key), value, false, "a size no memory holds", deck);
    if (key == "gram.A.random.rows") {  // the cols too
      deck.set("gram.A.random.cols", "2147483647");
      c = value_case(*find_key(key), value, false, "a size no memory holds", deck);
    }
    c.time_limit_s = 10;  // they hung before issue 9; each takes ~0.5 s now
    out.push_back(c);
  }
  return out;
}

std::vector<BadCase> kokkos_flags(std::uint64_t) {
  std::vector<BadCase> out;
  for (const std::string flag : {"--kokkos-num-threads=abc", "--kokkos-threads=abc", "--kokkos-num-threads=4x"}) {
    BadCase c;
    c.what = "malformed Kokkos flag " + flag;
    c.files = {deck_file(base_deck().text())};
    c.args = {"deck.yaml", flag};
    c.must_name = {flag.substr(0, flag.find('='))};
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<Family> deck_families() {
  return {
      {"deck.wrong_type", Where::InProcess, wrong_type},
      {"deck.out_of_range", Where::InProcess, out_of_range},
      {"deck.bad_choice", Where::InProcess, bad_choice},
      {"deck.unknown_key", Where::InProcess, unknown_key},
      {"deck.unknown_kernel", Where::InProcess, unknown_kernel},
      {"deck.malformed_yaml", Where::InProcess, malformed_yaml},
      {"deck.duplicate_key", Where::InProcess, duplicate_key},
      {"deck.multi_document", Where::InProcess, multi_document},
      {"deck.set_form", Where::InProcess, set_form},
      {"deck.cli_args", Where::InProcess, cli_args},
      {"deck.missing_input", Where::InProcess, missing_input},
      {"deck.wrong_input", Where::InProcess, wrong_input},
      {"deck.cross_key", Where::InProcess, cross_key},
      {"deck.long_value", Where::InProcess, long_value},
      {"deck.oversize", Where::SubprocessOnly, oversize},
      {"deck.kokkos_flags", Where::SubprocessOnly, kokkos_flags},
  };
}

}  // namespace kmini::fault
