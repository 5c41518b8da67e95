#include "case_support.hpp"

#include <algorithm>
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

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return parts;
}

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
// From StreamKernel::configure (stream.cpp), Rk4Kernel::configure and
// parse_init (rk4_config.cpp), read_config/read_input (discount_config.cpp),
// GramKernel::configure (gram_config.cpp) and run_checked (driver/app.cpp).

namespace {

constexpr double kInt64Max = 9.2233720368547758e18;
constexpr double kDoubleMax = 1.7976931348623157e308;
constexpr double kMaxDim = 2147483647;  // gram: int32 max

KeySpec make(const std::string& path, KeyType type) {
  KeySpec k;
  k.path = path;
  k.type = type;
  return k;
}
KeySpec integer(const std::string& path, double min, const std::string& valid, double max = 0) {
  KeySpec k = make(path, KeyType::Integer);
  k.min = min;
  k.max = max > 0 ? max : kInt64Max;
  k.has_max = max > 0;
  k.valid = valid;
  return k;
}
KeySpec real(const std::string& path, double min, double max, bool min_exclusive, const std::string& valid) {
  KeySpec k = make(path, KeyType::Real);
  k.min = min;
  k.max = max;
  k.min_exclusive = min_exclusive;
  k.valid = valid;
  return k;
}
KeySpec of_type(const std::string& path, KeyType t, const std::string& valid, std::vector<std::string> names = {}) {
  KeySpec k = make(path, t);
  k.valid = valid;
  k.names = std::move(names);
  return k;
}
KeySpec with(KeySpec k, std::vector<std::pair<std::string, std::string>> context) {
  k.context = std::move(context);
  return k;
}
KeySpec with_auto(KeySpec k) {
  k.word_auto = true;
  return k;
}

}  // namespace

const std::vector<KeySpec>& deck_keys() {
  using T = KeyType;
  static const std::vector<KeySpec> keys = {
      of_type("run", T::Section, "{}"),
      of_type("run.kernels", T::NameList, "[stream]", {"stream", "rk4", "discount", "gram"}),
      of_type("run.verify", T::Boolean, "true"),
      integer("run.seed", 0, "1"),

      of_type("stream", T::Section, "{}"),
      integer("stream.n", 1, "1000"),
      of_type("stream.ops", T::NameList, "[add]", {"add", "exp"}),
      integer("stream.repeat", 1, "1", 100000),

      of_type("rk4", T::Section, "{}"),
      integer("rk4.n", 1, "8", 1 << 21),
      real("rk4.dt", 0, kDoubleMax, true, "0.001"),
      integer("rk4.steps", 0, "2"),
      with_auto(real("rk4.g", -kDoubleMax, kDoubleMax, false, "0.01")),
      with(of_type("rk4.delta0", T::RealPair, "[0, 0]"), {{"rk4.coupling", "per_step"}}),
      of_type("rk4.coupling", T::Choice, "per_stage", {"per_step", "per_stage"}),
      of_type("rk4.precision", T::Choice, "double", {"single", "double"}),
      of_type("rk4.init", T::Section, "{}"),
      of_type("rk4.init.F", T::Section, "{fill: [1, 0]}"),
      of_type("rk4.init.F.fill", T::RealPair, "[1, 0]"),
      of_type("rk4.init.F.random", T::Section, "{seed: 3}"),
      integer("rk4.init.F.random.seed", 0, "3"),
      real("rk4.init.F.random.scale", 0, kDoubleMax, false, "1.0"),
      of_type("rk4.init.F.file", T::Text, ""),
      of_type("rk4.init.G", T::Section, "{fill: [0.25, 0]}"),
      of_type("rk4.init.G.fill", T::RealPair, "[0.25, 0]"),
      integer("rk4.init.G.random.seed", 0, "4"),
      of_type("rk4.init.G.file", T::Text, ""),
      of_type("rk4.write", T::Section, "{}"),
      of_type("rk4.write.delta", T::OutputPath, "delta.csv", {".npy", ".csv"}),
      of_type("rk4.write.F", T::OutputPath, "F.npy", {".npy"}),
      of_type("rk4.write.G", T::OutputPath, "G.npy", {".npy"}),
      of_type("rk4.progress", T::Section, "{}"),
      integer("rk4.progress.every", 0, "0"),
      of_type("rk4.progress.invariant", T::Boolean, "false"),
      integer("rk4.check_every", 1, "100"),
      of_type("rk4.checkpoint", T::Section, "{}"),
      integer("rk4.checkpoint.every", 0, "0"),
      of_type("rk4.checkpoint.path", T::OutputPath, "ck.npy", {".npy"}),
      of_type("rk4.restart", T::Text, ""),
      integer("rk4.verify_steps", 0, "2"),

      of_type("discount", T::Section, "{}"),
      integer("discount.dates", 1, "2"),
      integer("discount.ids", 1, "3"),
      integer("discount.terms", 1, "2"),
      of_type("discount.precision", T::Choice, "double", {"double", "single"}),
      of_type("discount.reduce", T::Choice, "none", {"none", "per_date", "per_id"}),
      of_type("discount.policy", T::Choice, "flat", {"mdrange", "flat"}),
      // valid everywhere: regular (streaming only where the build has it)
      of_type("discount.stores", T::Choice, "regular", {"auto", "regular", "streaming"}),
      integer("discount.repeat", 1, "1", 100000),
      of_type("discount.init", T::Section, "{}"),
      of_type("discount.init.mult_by", T::Section, "{arange: {}}"),
      of_type("discount.init.mult_by.arange", T::Section, "{}"),
      of_type("discount.init.mult_by.random", T::Section, "{seed: 1}"),
      integer("discount.init.mult_by.random.seed", 0, "1"),
      of_type("discount.init.mult_by.file", T::Text, ""),
      of_type("discount.init.discount", T::Section, "{arange: {}}"),
      integer("discount.init.discount.random.seed", 0, "2"),
      of_type("discount.init.discount.file", T::Text, ""),
      of_type("discount.write", T::Section, "{}"),
      of_type("discount.write.cv", T::Text, "cv.npy"),
      with(of_type("discount.write.reduced", T::Text, "r.npy"), {{"discount.reduce", "per_date"}}),

      of_type("gram", T::Section, "{}"),
      of_type("gram.A", T::Section, "{random: {rows: 8, cols: 16}}"),
      of_type("gram.A.random", T::Section, "{rows: 8, cols: 16}"),
      integer("gram.A.random.rows", 1, "8", kMaxDim),
      integer("gram.A.random.cols", 1, "16", kMaxDim),
      real("gram.A.random.density", 0, 1, false, "0.5"),
      integer("gram.A.random.seed", 0, "1"),
      with(of_type("gram.A.file", T::Text, ""), {{"gram.A.random", ""}}),
      with_auto(integer("gram.row_slice", 1, "8")),
      with_auto(real("gram.memory_budget", 0, 1e18, true, "auto")),
      of_type("gram.B", T::Section, "{random: {rows: 4, cols: 16}}"),
      of_type("gram.B.random", T::Section, "{rows: 4, cols: 16}"),
      with(integer("gram.B.random.rows", 1, "4", kMaxDim), {{"gram.B.random.cols", "16"}}),
      with(real("gram.B.random.density", 0, 1, false, "0.5"), {{"gram.B.random.cols", "16"}}),
      with(integer("gram.B.random.seed", 0, "1"), {{"gram.B.random.cols", "16"}}),
      of_type("gram.similarity", T::Choice, "counts", {"counts", "jaccard", "dice", "cosine"}),
      of_type("gram.triangle", T::Choice, "full", {"full", "upper"}),
      // valid everywhere: portable (the others only where the build has their instructions)
      of_type("gram.micro_kernel", T::Choice, "portable", {"auto", "portable", "avx2", "avx512bw", "avx512_vpopcntdq"}),
      of_type("gram.distribution", T::Choice, "replicated", {"replicated", "ring", "auto"}),
      of_type("gram.write", T::Section, "{}"),
      of_type("gram.write.C", T::Text, "C.npy"),
      of_type("gram.write.summary", T::Text, "s.json"),
      of_type("gram.write.pairs", T::Section, "{path: p.npy, min: 1}"),
      with(of_type("gram.write.pairs.path", T::Text, "p.npy"), {{"gram.write.pairs.min", "1"}}),
      with(real("gram.write.pairs.min", 0, kDoubleMax, false, "1"), {{"gram.write.pairs.path", "p.npy"}}),
      of_type("gram.write.top_k", T::Section, "{path: t.npy, k: 2}"),
      with(of_type("gram.write.top_k.path", T::Text, "t.npy"), {{"gram.write.top_k.k", "2"}}),
      with(integer("gram.write.top_k.k", 1, "2", 7), {{"gram.write.top_k.path", "t.npy"}}),
      of_type("gram.baseline", T::Boolean, "false"),
      integer("gram.baseline_rows", 1, "8", kMaxDim),
      integer("gram.repeat", 1, "1", 1000),
  };
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
