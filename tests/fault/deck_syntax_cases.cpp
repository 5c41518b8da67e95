// The deck's syntax and the command line: malformed YAML, duplicate keys,
// several documents, --set forms and command-line arguments; each case bad by
// construction, with what its error line must name.
#include "case_support.hpp"
#include "deck_case_helpers.hpp"
#include "deck_cases.hpp"

#include <algorithm>
#include <set>

namespace kmini::fault {

namespace {
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
  add("two empty documents, then a bogus one", "---\n---\nrun: {kernels: [bogus]}\n");
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
  add("trailing dot in the key", {"--set", "rk4.n.=5"}, {"--set rk4.n.=5"});
  add("leading dot in the key", {"--set", ".rk4.n=5"}, {"--set .rk4.n=5"});
  add("empty component in the key", {"--set", "rk4..n=5"}, {"--set rk4..n=5"});
  add("only a dot as the key", {"--set", ".=5"}, {"--set .=5"});
  add("unclosed '[' in the value", {"--set", "stream.ops=[add,"}, {"--set stream.ops="});
  add("unclosed '{' in the value", {"--set", "rk4.init.F={fill: [1, 0]"}, {"--set rk4.init.F="});
  add("unterminated quote in the value", {"--set", "rk4.write.F=\"F.npy"}, {"--set rk4.write.F="});
  add("value with a newline and a second document", {"--set", "stream.n=1000\n---\nrun: {kernels: [bogus]}"},
      {"--set stream.n=", "stream.n"});
  add("value with a newline and a second key", {"--set", "stream.n=1000\nrepeat: 5"}, {"--set stream.n="});
  add("unknown section (blamed on the deck)", {"--set", "bogus.x=1"}, {"--set bogus.x=1", "bogus"});
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
  add("two --out options", {"deck.yaml", "--out", "out", "--out", "out2"}, {"--out"}, {"out", "out2"});
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
  add("a directory as the deck", {"adir"}, {"adir"}, {}, {CaseFile{"adir", "", true}});
  add("an unreadable deck path below a file", {"afile/deck.yaml"}, {"afile/deck.yaml"}, {},
      {CaseFile{"afile", "not a directory\n", false}});
  return out;
}

}  // namespace

std::vector<Family> deck_syntax_families() {
  return {
      {"deck.malformed_yaml", Where::InProcess, malformed_yaml},
      {"deck.duplicate_key", Where::InProcess, duplicate_key},
      {"deck.multi_document", Where::InProcess, multi_document},
      {"deck.set_form", Where::InProcess, set_form},
      {"deck.cli_args", Where::InProcess, cli_args},
  };
}

}  // namespace kmini::fault
