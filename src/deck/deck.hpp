#pragma once
// Input decks: YAML read with yaml-cpp, overridden by --set KEY=VALUE, read
// through typed accessors that validate every value. Each accessor records
// the key as known and the resolved value (defaults included) for
// results.json; keys nobody asked for are errors, never ignored.
#include "io/json.hpp"

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kmini {

// A node on one line, in YAML flow style: "[1, 2]", "{a: 1, b: 2}".
std::string flow_text(const YAML::Node& v);

class Deck;

// What the accessor that read a key accepts: recorded as configure() reads the
// deck, so the deck's keys and what each accepts are declared once, in the
// code that checks them, and the fault tests (tests/fault) read them from there.
struct KeyRule {
  enum class Kind { Section, Integer, Real, ByteSize, Boolean, Choice, Text, OutputPath, Reals, RealList, ChoiceList };
  Kind kind = Kind::Text;
  double min = 0, max = 0;           // Integer, Real, ByteSize (inclusive; Real: min exclusive when asked)
  bool min_exclusive = false;        // Real
  std::vector<std::string> options;  // Choice, ChoiceList: the names; OutputPath: the accepted suffixes
  std::size_t count = 0;             // Reals: exactly; RealList: at most
};
using KeyRules = std::map<std::string, KeyRule>;  // dotted path -> rule

// The name of a rule's kind, as `kmini describe` and the fault tests print it.
const char* kind_name(KeyRule::Kind k);

// One deck key as its kernel declares it (src/<kernel>/<kernel>_declaration.cpp):
// what it accepts, its default, unit and a one-line help. The kernel's
// configure() reads the deck through these (DeckNode's DeckKey accessors), so
// the CLI, the Python module, `kmini describe` and the deck reference all take
// a key's meaning from this one place.
struct DeckKey {
  std::string key;         // dotted path below the kernel's section: "n", "init.F.fill"
  KeyRule rule;            // what it accepts
  Json fallback;           // its default (null: none; the key is then optional or required)
  bool required = false;   // must be given where its section is read
  bool auto_word = false;  // the word `auto` is accepted besides a value of its kind
  std::string unit;        // of the value: "s", "bytes", "elements"; empty for none
  std::string help;        // one line

  static DeckKey section(std::string key, std::string help);
  static DeckKey integer(std::string key, Json fallback, double min,
                         double max = static_cast<double>(std::numeric_limits<std::int64_t>::max()));
  static DeckKey real(std::string key, Json fallback, double min, double max, bool min_exclusive = false);
  static DeckKey byte_size(std::string key, Json fallback, double max);
  static DeckKey boolean(std::string key, bool fallback);
  static DeckKey choice(std::string key, std::string fallback, std::vector<std::string> options);
  static DeckKey text(std::string key);
  static DeckKey output_path(std::string key, std::vector<std::string> suffixes, std::string fallback = "");
  static DeckKey reals(std::string key, std::vector<double> fallback, std::size_t count);
  static DeckKey real_list(std::string key, double min, std::size_t max_count);
  static DeckKey choice_list(std::string key, std::vector<std::string> fallback, std::vector<std::string> options);
  DeckKey& with(std::string unit_, std::string help_) {
    unit = std::move(unit_);
    help = std::move(help_);
    return *this;
  }
  DeckKey& or_auto() {
    auto_word = true;
    return *this;
  }
  DeckKey& must() {
    required = true;
    return *this;
  }
  // The last name of the dotted key: what the accessor reads in its node.
  std::string name() const { return key.substr(key.rfind('.') + 1); }
  // For `kmini describe --json`: the key's full path is `section.key`.
  Json to_json(const std::string& section) const;
};

// A view of one map in the deck, at a dotted path ("rk4.init.F").
class DeckNode {
 public:
  const std::string& path() const { return path_; }
  bool has(const std::string& key) const;
  // No keys at all (absent, null or {}).
  bool empty() const;
  DeckNode child(const std::string& key) const;  // a missing map reads as empty

  static constexpr std::int64_t kNoMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t min,
                       std::int64_t max = kNoMax) const;
  std::int64_t required_integer(const std::string& key, std::int64_t min, std::int64_t max = kNoMax) const;
  // Real in [min, max] (or (min, max] when min_exclusive).
  double real(const std::string& key, double fallback, double min, double max, bool min_exclusive = false) const;
  double required_real(const std::string& key, double min, double max, bool min_exclusive = false) const;
  // A byte count of at least 1 and at most `max`: bytes, or with a binary unit
  // ("512M", "1.5GiB", "4 G"; M = MiB, as Slurm reads it). Whole bytes.
  double byte_size(const std::string& key, double fallback, double max) const;
  bool boolean(const std::string& key, bool fallback) const;
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::vector<std::string>& options) const;
  // A non-empty string; an empty fallback means "not given" and is not recorded.
  std::string text(const std::string& key, const std::string& fallback) const;
  std::string required_text(const std::string& key) const;
  std::vector<double> reals(const std::string& key, const std::vector<double>& fallback, std::size_t count) const;
  // A list of 0 .. max_count finite numbers >= min (absent: empty).
  std::vector<double> real_list(const std::string& key, double min, std::size_t max_count) const;
  // An output file's path ending in one of `suffixes` (".npy"); absent: `fallback`.
  std::string output_path(const std::string& key, const std::vector<std::string>& suffixes,
                          const std::string& fallback = "") const;
  std::vector<std::string> choice_list(const std::string& key, const std::vector<std::string>& fallback,
                                       const std::vector<std::string>& options) const;
  // The same accessors, reading a declared key (DeckKey): its rule, default and
  // limits are the declaration's. The key must be `k.key` below the kernel's
  // section (a mismatch is a programming error, std::logic_error). Overloads
  // with a value take a default or limit only known at run time (the declared
  // default then says so in words, e.g. "auto").
  DeckNode child(const DeckKey& k) const;
  std::int64_t integer(const DeckKey& k) const;
  std::int64_t integer(const DeckKey& k, std::int64_t fallback) const;
  std::int64_t required_integer(const DeckKey& k, std::int64_t max) const;
  double real(const DeckKey& k) const;
  double byte_size(const DeckKey& k) const;
  bool boolean(const DeckKey& k) const;
  std::string choice(const DeckKey& k) const;
  std::string text(const DeckKey& k) const;
  std::vector<double> reals(const DeckKey& k) const;
  std::vector<double> real_list(const DeckKey& k) const;
  std::string output_path(const DeckKey& k) const;
  std::vector<std::string> choice_list(const DeckKey& k) const;
  // For a key declared or_auto(): true (and `auto` recorded) when it is
  // absent or the word auto; else read it with the accessor of its kind.
  bool is_auto(const DeckKey& k) const;

  // For a map that must hold exactly one of `alternatives` (e.g. init.F: {fill|file|random}).
  std::string one_of(const std::vector<std::string>& alternatives) const;
  // For a deck value that may be the word `auto` or a number.
  bool is_word(const std::string& key, const std::string& word) const;

  // The key's dotted path from the deck's root: "rk4.write.F".
  std::string key_path(const std::string& key) const { return full(key); }
  // Where the key comes from: "deck.yaml:12" or "--set rk4.n=5".
  std::string where(const std::string& key) const;
  // where(key) and the key's dotted path, to prefix a message about its value:
  // "deck.yaml:12: rk4.init.F.file".
  std::string located(const std::string& key) const { return where(key) + ": " + full(key); }
  // Throws UsageError: "<where>: <path.key>: got '<value>', expected <expected>".
  [[noreturn]] void fail(const std::string& key, const std::string& expected) const;

 private:
  friend class Deck;
  DeckNode(Deck* deck, std::string path, YAML::Node node) : deck_(deck), path_(std::move(path)), node_(node) {}
  YAML::Node lookup(const std::string& key) const;  // marks the key known, and used when present
  std::string full(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }
  std::string value_text(const std::string& key) const;
  void record(const std::string& key, Json value) const;
  void rule(const std::string& key, KeyRule r) const;  // records what `key` accepts
  // The key name `k` reads here, after checking it is declared for this node.
  std::string declared(const DeckKey& k) const;

  Deck* deck_;
  std::string path_;
  YAML::Node node_;
};

class Deck {
 public:
  static Deck from_file(const std::string& path);
  static Deck from_text(const std::string& text, const std::string& origin);

  // "section.key=value"; value is YAML (numbers, true/false, [a, b] lists, {k: v} maps)
  // on one line. The key is a dotted path of names (letters, digits, _ and -).
  void apply_set(const std::string& assignment);

  DeckNode root() { return DeckNode(this, "", root_); }
  // Throws UsageError for the first key (in deck order) no accessor asked for.
  void check_all_keys_known() const;
  const Json& resolved() const { return resolved_; }
  const std::string& origin() const { return origin_; }
  // What each key read so far accepts (KeyRule).
  const KeyRules& rules() const { return rules_; }

 private:
  friend class DeckNode;
  Deck(YAML::Node root, std::string origin) : root_(root), origin_(std::move(origin)) {}
  // The one YAML document in `text` (a deck file when `lines`, else a --set value
  // for the dotted `path`); a second document, or a key given twice in any map,
  // is a UsageError naming `origin` (and the lines).
  static YAML::Node load_one_document(const std::string& text, const std::string& origin, const std::string& path,
                                      bool lines);
  std::string where(const std::string& path, const YAML::Node& node) const;
  void check_map(const YAML::Node& map, const std::string& path) const;

  YAML::Node root_;
  std::string origin_;                           // file name, or "built-in default deck"
  std::map<std::string, std::string> set_from_;  // dotted path -> "--set ..."
  mutable std::set<std::string> known_;          // every key an accessor asked for
  mutable std::set<std::string> used_;           // keys present and read
  mutable Json resolved_ = Json::object();
  mutable KeyRules rules_;
};

}  // namespace kmini
