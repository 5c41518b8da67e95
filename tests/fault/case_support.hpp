#pragma once
// Building blocks of the generated cases: a portable seeded RNG, a small deck
// tree that prints block YAML and knows each key's line, the tiny base deck,
// and a .npy byte builder. Internal to tests/fault.
#include "bad_input_cases.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace kmini::fault {

// splitmix64: the same numbers on every platform and standard library.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(next() % n) : 0; }
  std::int64_t between(std::int64_t lo, std::int64_t hi) {  // inclusive
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }
  // k distinct indices of [0, n), in increasing order.
  std::vector<std::size_t> sample(std::size_t n, std::size_t k);

 private:
  std::uint64_t s_;
};

std::uint64_t hash_name(const std::string& s);  // FNV-1a

// A deck as an ordered tree of maps and flow-text leaves, printed as block
// YAML (two-space indent, one key per line) so every key's line is known.
class DeckTree {
 public:
  // Sets a leaf (flow YAML text) at a dotted path, creating maps on the way;
  // replaces whatever was there (a map included).
  void set(const std::string& path, const std::string& flow);
  // Makes the path an (empty if new) map.
  void set_map(const std::string& path);
  void remove(const std::string& path);
  bool has(const std::string& path) const;
  // Appends one more entry `key` to the map at `parent` even if it exists
  // (for duplicate keys); flow empty: an empty map to fill with add().
  void add_duplicate(const std::string& parent, const std::string& key, const std::string& flow);

  // Block YAML; `lines` (optional) gets each dotted path's 1-based line (the
  // last occurrence), and `all_lines` every occurrence.
  std::string text(std::map<std::string, int>* lines = nullptr,
                   std::multimap<std::string, int>* all_lines = nullptr) const;

 private:
  struct Entry {
    std::string key;
    bool map = false;
    std::string flow;
    std::vector<Entry> children;
  };
  static Entry* find(std::vector<Entry>& level, const std::string& key);
  Entry* walk(const std::string& path, bool create);
  static void print(const std::vector<Entry>& level, int indent, const std::string& prefix, std::string& out, int& line,
                    std::map<std::string, int>* lines, std::multimap<std::string, int>* all_lines);
  std::vector<Entry> root_;
};

std::vector<std::string> split(const std::string& s, char sep);
std::vector<std::string> split_path(const std::string& path);  // split(path, '.')
std::string parent_of(const std::string& path);
std::string last_of(const std::string& path);

// The tiny deck every generated case starts from: only stream runs, every
// kernel configured at sizes that run in milliseconds, so a case that kmini
// wrongly accepts finishes at once (and then fails the test).
DeckTree base_deck();
// Keeps a case from running the big default deck if kmini reads another
// document than the one meant (multi-document decks).
std::vector<std::string> safety_sets();

// --- the deck keys kmini reads (src/*/ configure functions), in one place ---
enum class KeyType { Integer, Real, Boolean, Choice, Text, OutputPath, RealPair, NameList, Section };

struct KeySpec {
  std::string path;
  KeyType type = KeyType::Integer;
  double min = 0, max = 0;                                   // Integer/Real: the valid range
  bool min_exclusive = false;                                // Real: (min, max]
  bool has_max = false;                                      // Integer: a max below int64's
  std::vector<std::string> names;                            // Choice/NameList options; OutputPath: accepted suffixes
  std::string valid;                                         // a valid value (flow text)
  std::vector<std::pair<std::string, std::string>> context;  // set first ("" value: remove the path)
  bool word_auto = false;                                    // `auto` is also valid
};
// A key the cases exercise: a valid value, the keys it needs set (or, with
// "", removed) and, where the valid value skips the accessor (`auto`, an input
// file that does not exist here), the value that makes configure read it.
struct KeySample {
  std::string path, valid;
  std::vector<std::pair<std::string, std::string>> context;
  std::string probe;
  // {path, valid[, context[, probe]]}: a constructor, not an aggregate, so that clang's
  // -Wmissing-field-initializers (the HIP build's compiler) accepts the samples that omit the last two.
  KeySample(std::string path_, std::string valid_, std::vector<std::pair<std::string, std::string>> context_ = {},
            std::string probe_ = "")
      : path(std::move(path_)), valid(std::move(valid_)), context(std::move(context_)), probe(std::move(probe_)) {}
  const std::string& probe_value() const { return probe.empty() ? valid : probe; }
};
const std::vector<KeySample>& key_samples();

// One line of the rules file: what the accessor that read a key accepts
// (kind: section, integer, real, byte_size, boolean, choice, text,
// output_path, reals, real_list, choice_list); sampled: a KeySample covers it.
struct RuleFields {
  std::string kind;
  double min = 0, max = 0;
  bool min_exclusive = false;
  std::size_t count = 0;
  std::vector<std::string> options;
  bool sampled = false;
};
std::string key_rule_line(const std::string& path, const RuleFields& r);
std::map<std::string, RuleFields> read_key_rules(const std::string& file);
const std::map<std::string, RuleFields>& key_rules();  // the file KMINI_DECK_KEY_RULES names

// The samples with their rules: every case family iterates over these.
const std::vector<KeySpec>& deck_keys();
const KeySpec* find_key(const std::string& path);
// Applies a key's context (its own value is left to the caller).
void apply_context(DeckTree& deck, const KeySpec& k);

// --- .npy bytes ---------------------------------------------------------------
struct NpyParts {
  std::string descr;  // "<f8"
  bool fortran = false;
  std::string shape;  // "(3, 4)" as written in the dict
  std::string extra;  // more dict text, e.g. "'foo': 1, "
  int major = 1;
  std::vector<std::string> omit;  // dict keys left out
};
// The dict text numpy writes, padded so that the data start is 64-byte aligned.
std::string npy_header(const NpyParts& p);
std::string npy_file(const NpyParts& p, const std::string& data);
std::string shape_text(const std::vector<std::int64_t>& shape);
std::size_t descr_item_size(const std::string& descr);  // 0: unknown

// Little-endian bytes of values.
template <class T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

}  // namespace kmini::fault
