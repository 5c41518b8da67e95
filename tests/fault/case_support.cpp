#include "case_support.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

namespace kmini::fault {

std::vector<std::size_t> Rng::sample(std::size_t n, std::size_t k) {
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  for (std::size_t i = 0; i < std::min(n, k); ++i) std::swap(all[i], all[i + below(n - i)]);
  all.resize(std::min(n, k));
  std::sort(all.begin(), all.end());
  return all;
}

std::uint64_t hash_name(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// ------------------------------------------------------------------ paths ----

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto at = s.find(sep, start);
    parts.push_back(s.substr(start, at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

std::vector<std::string> split_path(const std::string& path) { return split(path, '.'); }

std::string parent_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? "" : path.substr(0, dot);
}

std::string last_of(const std::string& path) {
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// --------------------------------------------------------------- DeckTree ----

DeckTree::Entry* DeckTree::find(std::vector<Entry>& level, const std::string& key) {
  for (auto it = level.rbegin(); it != level.rend(); ++it)
    if (it->key == key) return &*it;
  return nullptr;
}

DeckTree::Entry* DeckTree::walk(const std::string& path, bool create) {
  std::vector<Entry>* level = &root_;
  Entry* e = nullptr;
  for (const auto& part : split_path(path)) {
    if (e) {
      if (!e->map) {
        if (!create) return nullptr;
        e->map = true;
        e->flow.clear();
      }
      level = &e->children;
    }
    e = find(*level, part);
    if (!e) {
      if (!create) return nullptr;
      level->push_back(Entry{part, true, "", {}});
      e = &level->back();
    }
  }
  return e;
}

void DeckTree::set(const std::string& path, const std::string& flow) {
  Entry* e = walk(path, true);
  e->map = false;
  e->children.clear();
  e->flow = flow;
}

void DeckTree::set_map(const std::string& path) {
  Entry* e = walk(path, true);
  if (!e->map) {
    e->map = true;
    e->flow.clear();
  }
}

void DeckTree::remove(const std::string& path) {
  const std::string parent = parent_of(path);
  std::vector<Entry>* level = &root_;
  if (!parent.empty()) {
    Entry* p = walk(parent, false);
    if (!p || !p->map) return;
    level = &p->children;
  }
  const std::string key = last_of(path);
  level->erase(std::remove_if(level->begin(), level->end(), [&](const Entry& e) { return e.key == key; }),
               level->end());
}

bool DeckTree::has(const std::string& path) const { return const_cast<DeckTree*>(this)->walk(path, false) != nullptr; }

void DeckTree::add_duplicate(const std::string& parent, const std::string& key, const std::string& flow) {
  std::vector<Entry>* level = &root_;
  if (!parent.empty()) {
    set_map(parent);
    level = &walk(parent, false)->children;
  }
  level->push_back(Entry{key, flow.empty(), flow, {}});
}

namespace {

std::string key_text(const std::string& key) {
  bool plain = !key.empty();
  for (char c : key) plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-');
  if (plain) return key;
  std::string q = "'";
  for (char c : key) q += c == '\'' ? std::string("''") : std::string(1, c);
  return q + "'";
}

}  // namespace

void DeckTree::print(const std::vector<Entry>& level, int indent, const std::string& prefix, std::string& out,
                     int& line, std::map<std::string, int>* lines, std::multimap<std::string, int>* all_lines) {
  for (const auto& e : level) {
    const std::string path = prefix.empty() ? e.key : prefix + "." + e.key;
    out += std::string(static_cast<std::size_t>(indent), ' ') + key_text(e.key) + ":";
    if (lines) (*lines)[path] = line;
    if (all_lines) all_lines->emplace(path, line);
    if (!e.map) {
      out += " " + e.flow + "\n";
      ++line;
    } else if (e.children.empty()) {
      out += " {}\n";
      ++line;
    } else {
      out += "\n";
      ++line;
      print(e.children, indent + 2, path, out, line, lines, all_lines);
    }
  }
}

std::string DeckTree::text(std::map<std::string, int>* lines, std::multimap<std::string, int>* all_lines) const {
  std::string out;
  int line = 1;
  print(root_, 0, "", out, line, lines, all_lines);
  return out;
}

DeckTree base_deck() {
  DeckTree d;
  d.set("run.kernels", "[stream]");
  d.set("run.verify", "true");
  d.set("run.seed", "1");
  d.set("stream.n", "1000");
  d.set("stream.ops", "[add]");
  d.set("stream.repeat", "1");
  d.set("rk4.n", "8");
  d.set("rk4.dt", "0.001");
  d.set("rk4.steps", "2");
  d.set("discount.dates", "2");
  d.set("discount.ids", "3");
  d.set("discount.terms", "2");
  d.set("discount.repeat", "1");
  d.set("gram.A.random.rows", "8");
  d.set("gram.A.random.cols", "16");
  d.set("gram.row_slice", "8");
  d.set("gram.repeat", "1");
  return d;
}

std::vector<std::string> safety_sets() {
  return {"--set", "run.kernels=[stream]", "--set", "stream.n=1000", "--set", "stream.repeat=1"};
}

// ------------------------------------------------------------- key table ----
// The keys the cases exercise, each with a valid value and what it needs
// beside it. What a key accepts (its type, range, names or suffixes) is not
// restated here: the fault.deck_key_rules fixture configures kmini on the base
// deck with each sample set (write_deck_key_rules, in-process) and writes the
// rules the deck's accessors recorded (KeyRule, deck/deck.hpp) to the file
// KMINI_DECK_KEY_RULES names, which deck_keys() reads.

const std::vector<KeySample>& key_samples() {
  static const std::vector<KeySample> samples = {
      {"run", "{}"},
      {"run.kernels", "[stream]"},
      {"run.verify", "true"},
      {"run.seed", "1"},
      {"stream", "{}"},
      {"stream.n", "1000"},
      {"stream.ops", "[add]"},
      {"stream.repeat", "1"},
      {"rk4", "{}"},
      {"rk4.n", "8"},
      {"rk4.dt", "0.001"},
      {"rk4.steps", "2"},
      {"rk4.kerr", "0"},
      {"rk4.method", "stages"},
      {"rk4.chunk", "1"},
      {"rk4.occupancy", "full"},
      {"rk4.grid", "wave"},
      {"rk4.loads", "vector"},
      {"rk4.g", "0.01"},
      {"rk4.delta0", "[0, 0]", {{"rk4.coupling", "per_step"}}},
      {"rk4.coupling", "per_stage"},
      {"rk4.precision", "double"},
      {"rk4.init", "{}"},
      {"rk4.init.F", "{fill: [1, 0]}"},
      {"rk4.init.F.fill", "[1, 0]"},
      {"rk4.init.F.random", "{seed: 3}"},
      {"rk4.init.F.random.seed", "3"},
      {"rk4.init.F.random.scale", "1.0"},
      {"rk4.init.F.file", "", {}, "missing.npy"},
      {"rk4.init.G", "{fill: [0.25, 0]}"},
      {"rk4.init.G.fill", "[0.25, 0]"},
      {"rk4.init.G.random.seed", "4"},
      {"rk4.init.G.random", "{seed: 4}"},
      {"rk4.init.G.random.scale", "1.0"},
      {"rk4.init.G.file", "", {}, "missing.npy"},
      {"rk4.write", "{}"},
      {"rk4.write.delta", "delta.csv"},
      {"rk4.write.F", "F.npy"},
      {"rk4.write.G", "G.npy"},
      {"rk4.progress", "{}"},
      {"rk4.progress.every", "0"},
      {"rk4.progress.invariant", "false"},
      {"rk4.check_every", "100"},
      {"rk4.checkpoint", "{}"},
      {"rk4.checkpoint.every", "0"},
      {"rk4.checkpoint.path", "ck.npy"},
      {"rk4.restart", "", {}, "missing.npy"},
      {"rk4.verify_steps", "2"},
      {"discount", "{}"},
      {"discount.dates", "2"},
      {"discount.ids", "3"},
      {"discount.terms", "2"},
      {"discount.precision", "double"},
      {"discount.reduce", "none"},
      {"discount.policy", "wave"},
      {"discount.loads", "vector", {{"discount.policy", "flat"}}},
      {"discount.stores", "regular"},
      {"discount.repeat", "1"},
      {"discount.init", "{}"},
      {"discount.init.mult_by", "{arange: {}}"},
      {"discount.init.mult_by.arange", "{}"},
      {"discount.init.mult_by.random", "{seed: 1}"},
      {"discount.init.mult_by.random.seed", "1"},
      {"discount.init.mult_by.file", "", {}, "missing.npy"},
      {"discount.init.discount", "{arange: {}}"},
      {"discount.init.discount.arange", "{}"},
      {"discount.init.discount.random", "{seed: 2}"},
      {"discount.init.discount.random.seed", "2"},
      {"discount.init.discount.file", "", {}, "missing.npy"},
      {"discount.write", "{}"},
      {"discount.write.cv", "cv.npy"},
      {"discount.write.reduced", "r.npy", {{"discount.reduce", "per_date"}}},
      {"gram", "{}"},
      {"gram.A", "{random: {rows: 8, cols: 16}}"},
      {"gram.A.random", "{rows: 8, cols: 16}"},
      {"gram.A.random.rows", "8"},
      {"gram.A.random.cols", "16"},
      {"gram.A.random.density", "0.5"},
      {"gram.A.random.seed", "1"},
      {"gram.A.file", "", {{"gram.A.random", ""}}},
      {"gram.A.packed", "", {{"gram.A.random", ""}, {"gram.A.file", "missing.npy"}}, "false"},
      {"gram.A.cols", "", {{"gram.A.random", ""}, {"gram.A.file", "missing.npy"}, {"gram.A.packed", "true"}}, "16"},
      {"gram.row_slice", "8"},
      {"gram.memory_budget", "auto", {}, "64M"},
      {"gram.B", "{random: {rows: 4, cols: 16}}"},
      {"gram.B.random", "{rows: 4, cols: 16}"},
      {"gram.B.random.rows", "4", {{"gram.B.random.cols", "16"}}},
      {"gram.B.random.cols", "16", {{"gram.B.random.rows", "4"}}},
      {"gram.B.random.density", "0.5", {{"gram.B.random.cols", "16"}}},
      {"gram.B.random.seed", "1", {{"gram.B.random.cols", "16"}}},
      {"gram.B.file", "", {}, "missing.npy"},
      {"gram.B.packed", "", {{"gram.B.file", "missing.npy"}}, "false"},
      {"gram.B.cols", "", {{"gram.B.file", "missing.npy"}, {"gram.B.packed", "true"}}, "16"},
      {"gram.similarity", "counts"},
      {"gram.triangle", "full"},
      {"gram.micro_kernel", "portable"},
      {"gram.engine", "popcount"},
      {"gram.tensor_core_tile", "warp64x64"},
      {"gram.distribution", "replicated"},
      {"gram.ring_schedule", "auto"},
      {"gram.write", "{}"},
      {"gram.write.C", "C.npy"},
      {"gram.write.summary", "s.json"},
      {"gram.write.pairs", "{path: p.npy, min: 1}"},
      {"gram.write.pairs.path", "p.npy", {{"gram.write.pairs.min", "1"}}},
      {"gram.write.pairs.min", "1", {{"gram.write.pairs.path", "p.npy"}}},
      {"gram.write.top_k", "{path: t.npy, k: 2}"},
      {"gram.write.top_k.path", "t.npy", {{"gram.write.top_k.k", "2"}}},
      {"gram.write.top_k.k", "2", {{"gram.write.top_k.path", "t.npy"}}},
      {"gram.write.top_k.min", "0", {{"gram.write.top_k.path", "t.npy"}, {"gram.write.top_k.k", "2"}}},
      {"gram.write.top_k.text", "t.tsv", {{"gram.write.top_k.path", "t.npy"}, {"gram.write.top_k.k", "2"}}},
      {"gram.write.pairs.text", "p.tsv", {{"gram.write.pairs.path", "p.npy"}, {"gram.write.pairs.min", "1"}}},
      {"gram.write.top_k.simsearch",
       "t.txt",
       {{"gram.write.top_k.path", "t.npy"}, {"gram.write.top_k.k", "2"}, {"gram.similarity", "jaccard"}}},
      {"gram.empty_similarity", "0"},
      {"gram.tversky", "{alpha: 0.5, beta: 0.5}", {{"gram.similarity", "tversky"}}},
      {"gram.tversky.alpha", "0.5", {{"gram.similarity", "tversky"}, {"gram.tversky.beta", "0.5"}}},
      {"gram.tversky.beta", "0.5", {{"gram.similarity", "tversky"}, {"gram.tversky.alpha", "0.5"}}},
      {"gram.exclude_self", "false"},
      {"gram.prune", "false"},
      {"gram.baseline", "false"},
      {"gram.probe", "false"},
      {"gram.baseline_rows", "8"},
      {"gram.repeat", "1"},
  };
  return samples;
}

std::string key_rule_line(const std::string& path, const RuleFields& r) {
  char range[80];
  std::snprintf(range, sizeof range, "%.17g\t%.17g", r.min, r.max);
  std::string options;
  for (std::size_t i = 0; i < r.options.size(); ++i) options += (i ? "|" : "") + r.options[i];
  return path + "\t" + r.kind + "\t" + range + "\t" + (r.min_exclusive ? "1" : "0") + "\t" + std::to_string(r.count) +
         "\t" + options + "\t" + (r.sampled ? "1" : "0") + "\n";
}

std::map<std::string, RuleFields> read_key_rules(const std::string& file) {
  std::ifstream in(file);
  if (!in)
    throw std::runtime_error("deck key rules: cannot read " + file +
                             " (KMINI_DECK_KEY_RULES; the ctest fixture fault.deck_key_rules writes it)");
  std::map<std::string, RuleFields> rules;
  for (std::string line; std::getline(in, line);) {
    const auto f = split(line, '\t');
    if (f.size() != 8) throw std::runtime_error("deck key rules: malformed line in " + file + ": " + line);
    RuleFields r;
    r.kind = f[1];
    r.min = std::strtod(f[2].c_str(), nullptr);
    r.max = std::strtod(f[3].c_str(), nullptr);
    r.min_exclusive = f[4] == "1";
    r.count = std::stoul(f[5]);
    if (!f[6].empty()) r.options = split(f[6], '|');
    r.sampled = f[7] == "1";
    rules[f[0]] = r;
  }
  return rules;
}

const std::map<std::string, RuleFields>& key_rules() {
  static const std::map<std::string, RuleFields> rules = [] {
    const char* file = std::getenv("KMINI_DECK_KEY_RULES");
    if (!file || !*file) throw std::runtime_error("deck key rules: KMINI_DECK_KEY_RULES is not set");
    return read_key_rules(file);
  }();
  return rules;
}

KeySpec spec_of(const KeySample& sample, const RuleFields& r) {
  KeySpec k;
  k.path = sample.path;
  k.valid = sample.valid;
  k.context = sample.context;
  k.min = r.min;
  k.max = r.max;
  k.min_exclusive = r.min_exclusive;
  k.names = r.options;
  if (r.kind == "section") k.type = KeyType::Section;
  else if (r.kind == "integer") {
    k.type = KeyType::Integer;
    k.has_max = r.max < 9.2e18;  // below int64's largest
  } else if (r.kind == "real" || r.kind == "byte_size") k.type = KeyType::Real;
  else if (r.kind == "boolean") k.type = KeyType::Boolean;
  else if (r.kind == "choice") k.type = KeyType::Choice;
  else if (r.kind == "text") k.type = KeyType::Text;
  else if (r.kind == "output_path") k.type = KeyType::OutputPath;
  else if (r.kind == "reals" && r.count == 2) k.type = KeyType::RealPair;
  else if (r.kind == "choice_list") k.type = KeyType::NameList;
  else throw std::runtime_error("deck key rules: " + sample.path + " is a " + r.kind + ", which no family covers");
  return k;
}

const std::vector<KeySpec>& deck_keys() {
  static const std::vector<KeySpec> keys = [] {
    std::vector<KeySpec> out;
    const auto& rules = key_rules();
    for (const auto& sample : key_samples()) {
      const auto r = rules.find(sample.path);
      if (r == rules.end())
        throw std::runtime_error("deck key rules: no rule for " + sample.path + " (not read by configure with " +
                                 sample.probe_value() + ")");
      out.push_back(spec_of(sample, r->second));
    }
    return out;
  }();
  return keys;
}

const KeySpec* find_key(const std::string& path) {
  for (const auto& k : deck_keys())
    if (k.path == path) return &k;
  return nullptr;
}

void apply_context(DeckTree& deck, const KeySpec& k) {
  for (const auto& [path, value] : k.context) {
    if (value.empty()) deck.remove(path);
    else deck.set(path, value);
  }
}

// ------------------------------------------------------------------ .npy ----

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string npy_header(const NpyParts& p) {
  auto omitted = [&](const char* key) { return std::find(p.omit.begin(), p.omit.end(), key) != p.omit.end(); };
  std::string dict = "{";
  if (!omitted("descr")) dict += "'descr': '" + p.descr + "', ";
  if (!omitted("fortran_order")) dict += std::string("'fortran_order': ") + (p.fortran ? "True" : "False") + ", ";
  if (!omitted("shape")) dict += "'shape': " + p.shape + ", ";
  dict += p.extra + "}";
  const std::size_t prefix = p.major == 1 ? 10 : 12;
  std::size_t total = prefix + dict.size() + 1;
  const std::size_t pad = (64 - total % 64) % 64;
  dict += std::string(pad, ' ') + "\n";
  const std::size_t len = dict.size();
  std::string out = "\x93NUMPY";
  out += static_cast<char>(p.major);
  out += '\0';
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (p.major != 1) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + dict;
}

std::string npy_file(const NpyParts& p, const std::string& data) { return npy_header(p) + data; }

std::size_t descr_item_size(const std::string& descr) {
  if (descr.size() < 2) return 0;
  const char kind = descr[1];
  std::size_t n = 0;
  for (std::size_t i = 2; i < descr.size() && std::isdigit(static_cast<unsigned char>(descr[i])); ++i)
    n = n * 10 + static_cast<std::size_t>(descr[i] - '0');
  if (kind == 'O') return 8;
  if (kind == 'U') return 4 * n;
  return n;
}

}  // namespace kmini::fault
