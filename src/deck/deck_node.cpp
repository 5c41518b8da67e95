// DeckNode: the typed accessors kernels read their deck sections with. Each
// records the value it returns (defaults included) for results.json and
// fails with one line naming the file and line or --set, the key, the value
// and what was expected.
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "deck/deck.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace kmini {

namespace {

bool parse_int(const std::string& s, std::int64_t& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno || *end != '\0') {
    // Accept integral reals written with an exponent (1e6, 2.0e3).
    char* rend = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &rend);
    if (errno || *rend != '\0' || !std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18) return false;
    out = static_cast<std::int64_t>(d);
    return true;
  }
  out = v;
  return true;
}

bool parse_real(const std::string& s, double& out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !errno && *end == '\0' && std::isfinite(out);
}

std::string fmt(double v) { return format_g(v, 6); }

// "512M", "1.5GiB", "4 G", "65536": a number, optional spaces, an optional
// binary unit. K, M, G, T, P, with or without B or iB, any case,
// are powers of 1024 as in Slurm (--mem=512M is 512 MiB); a size of bytes
// needs no unit, or B. Whole bytes (rounded down).
bool parse_byte_size(const std::string& s, double& out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  errno = 0;
  char* end = nullptr;
  const double number = std::strtod(s.c_str(), &end);
  if (errno || end == s.c_str() || !std::isfinite(number)) return false;
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double scale = 1;
  if (!unit.empty() && unit != "b") {
    const std::string prefixes = "kmgtp";
    const auto power = prefixes.find(unit[0]);
    if (power == std::string::npos) return false;
    const std::string rest = unit.substr(1);
    if (!(rest.empty() || rest == "b" || rest == "ib")) return false;
    scale = std::ldexp(1.0, 10 * static_cast<int>(power + 1));
  }
  out = std::floor(number * scale);
  return std::isfinite(out);
}

}  // namespace

// ------------------------------------------------------------ DeckNode ----

YAML::Node DeckNode::lookup(const std::string& key) const {
  deck_->known_.insert(full(key));
  if (!node_.IsDefined() || node_.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  if (!node_.IsMap()) throw UsageError(deck_->where(path_, node_) + ": " + path_ + ": expected a map of keys");
  const YAML::Node& cnode = node_;
  YAML::Node v = cnode[key];
  if (v.IsDefined()) {
    // Mark the key and its parents as read.
    std::string p = full(key);
    while (true) {
      deck_->used_.insert(p);
      const auto dot = p.rfind('.');
      if (dot == std::string::npos) break;
      p.erase(dot);
    }
  }
  return v;
}

bool DeckNode::has(const std::string& key) const {
  if (!node_.IsDefined() || !node_.IsMap()) return false;
  const YAML::Node& cnode = node_;
  return cnode[key].IsDefined();
}

bool DeckNode::empty() const { return !node_.IsDefined() || node_.IsNull() || (node_.IsMap() && node_.size() == 0); }

void DeckNode::rule(const std::string& key, KeyRule r) const { deck_->rules_[full(key)] = std::move(r); }

namespace {
KeyRule make_rule(KeyRule::Kind kind, double min = 0, double max = 0) {
  KeyRule r;
  r.kind = kind;
  r.min = min;
  r.max = max;
  return r;
}
}  // namespace

DeckNode DeckNode::child(const std::string& key) const {
  if (!deck_->rules_.count(full(key))) rule(key, make_rule(KeyRule::Kind::Section));
  YAML::Node v = lookup(key);
  if (v.IsDefined() && !v.IsNull() && !v.IsMap())
    throw UsageError(deck_->where(full(key), v) + ": " + full(key) + ": expected a map of keys");
  return DeckNode(deck_, full(key), v);
}

std::string DeckNode::where(const std::string& key) const {
  const YAML::Node& cnode = node_;
  YAML::Node v = (node_.IsDefined() && node_.IsMap()) ? cnode[key] : YAML::Node(YAML::NodeType::Undefined);
  return deck_->where(full(key), v.IsDefined() ? v : node_);
}

std::string DeckNode::value_text(const std::string& key) const {
  const YAML::Node& cnode = node_;
  YAML::Node v = cnode[key];
  if (!v.IsDefined() || v.IsNull()) return "";
  return flow_text(v);
}

void DeckNode::fail(const std::string& key, const std::string& expected) const {
  std::string got = has(key) ? value_text(key) : std::string();
  std::string msg = where(key) + ": " + full(key) + ": ";
  msg += has(key) ? (got.empty() ? "empty value" : "got " + quoted_value(got)) : "missing";
  throw UsageError(msg + ", expected " + expected);
}

void DeckNode::record(const std::string& key, Json value) const {
  Json* j = &deck_->resolved_;
  std::stringstream ss(full(key));
  std::vector<std::string> parts;
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) j = &(*j)[parts[i]];
  (*j)[parts.back()] = std::move(value);
}

std::int64_t DeckNode::integer(const std::string& key, std::int64_t fallback, std::int64_t min,
                               std::int64_t max) const {
  rule(key, make_rule(KeyRule::Kind::Integer, double(min), double(max)));
  YAML::Node v = lookup(key);
  std::int64_t out = fallback;
  if (v.IsDefined()) {
    const std::string range =
        max == kNoMax ? ">= " + std::to_string(min) : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
    if (!v.IsScalar() || !parse_int(v.Scalar(), out) || out < min || out > max) fail(key, "an integer " + range);
  }
  record(key, Json(static_cast<long long>(out)));
  return out;
}

std::int64_t DeckNode::required_integer(const std::string& key, std::int64_t min, std::int64_t max) const {
  if (!has(key)) {
    lookup(key);
    fail(key, "an integer");
  }
  return integer(key, min, min, max);
}

double DeckNode::real(const std::string& key, double fallback, double min, double max, bool min_exclusive) const {
  KeyRule r = make_rule(KeyRule::Kind::Real, min, max);
  r.min_exclusive = min_exclusive;
  rule(key, r);
  YAML::Node v = lookup(key);
  double out = fallback;
  if (v.IsDefined()) {
    const bool ok =
        v.IsScalar() && parse_real(v.Scalar(), out) && (min_exclusive ? out > min : out >= min) && out <= max;
    if (!ok) {
      std::string range = min_exclusive ? "> " + fmt(min) : ">= " + fmt(min);
      if (max < std::numeric_limits<double>::max()) range += " and <= " + fmt(max);
      fail(key, "a finite number " + range);
    }
  }
  record(key, Json(out));
  return out;
}

double DeckNode::byte_size(const std::string& key, double fallback, double max) const {
  rule(key, make_rule(KeyRule::Kind::ByteSize, 1, max));
  YAML::Node v = lookup(key);
  double out = fallback;
  if (v.IsDefined() && !(v.IsScalar() && parse_byte_size(v.Scalar(), out) && out >= 1 && out <= max))
    fail(key, "a size of 1 to " + fmt(max) +
                  " bytes: a number, or one with a binary unit K, M, G, T or P (also KB/KiB, ...; M = MiB = 2^20 "
                  "bytes, as in Slurm) such as 65536, 512M, 4G, 1.5GiB or 512 MiB");
  record(key, Json(out));
  return out;
}

double DeckNode::required_real(const std::string& key, double min, double max, bool min_exclusive) const {
  if (!has(key)) {
    lookup(key);
    fail(key, "a number");
  }
  return real(key, min, min, max, min_exclusive);
}

bool DeckNode::boolean(const std::string& key, bool fallback) const {
  rule(key, make_rule(KeyRule::Kind::Boolean));
  YAML::Node v = lookup(key);
  bool out = fallback;
  if (v.IsDefined()) {
    const std::string s = v.IsScalar() ? v.Scalar() : "";
    if (s == "true") out = true;
    else if (s == "false") out = false;
    else fail(key, "true or false");
  }
  record(key, Json(out));
  return out;
}

std::string DeckNode::choice(const std::string& key, const std::string& fallback,
                             const std::vector<std::string>& options) const {
  KeyRule r = make_rule(KeyRule::Kind::Choice);
  r.options = options;
  rule(key, r);
  YAML::Node v = lookup(key);
  std::string out = fallback;
  if (v.IsDefined()) {
    out = v.IsScalar() ? v.Scalar() : "";
    bool ok = false;
    for (const auto& o : options) ok = ok || o == out;
    if (!ok) fail(key, "one of " + join(options, " | "));
  }
  record(key, Json(out));
  return out;
}

std::string DeckNode::text(const std::string& key, const std::string& fallback) const {
  rule(key, make_rule(KeyRule::Kind::Text));
  YAML::Node v = lookup(key);
  std::string out = fallback;
  if (v.IsDefined()) {
    if (!v.IsScalar() || v.Scalar().empty()) fail(key, "a non-empty string");
    out = v.Scalar();
  }
  // An empty fallback means "not given" (a given string is never empty): it is
  // not recorded, so the resolved deck stays a deck kmini accepts.
  if (!out.empty()) record(key, Json(out));
  return out;
}

std::string DeckNode::required_text(const std::string& key) const {
  if (!has(key)) {
    lookup(key);
    fail(key, "a non-empty string");
  }
  return text(key, "");
}

std::string DeckNode::output_path(const std::string& key, const std::vector<std::string>& suffixes,
                                  const std::string& fallback) const {
  const std::string out = text(key, fallback);
  KeyRule r = make_rule(KeyRule::Kind::OutputPath);
  r.options = suffixes;
  rule(key, r);
  if (!out.empty() &&
      std::none_of(suffixes.begin(), suffixes.end(), [&](const std::string& x) { return ends_with(out, x); }))
    fail(key, "a path ending in " + join(suffixes, " or "));
  return out;
}

std::vector<double> DeckNode::reals(const std::string& key, const std::vector<double>& fallback,
                                    std::size_t count) const {
  KeyRule r = make_rule(KeyRule::Kind::Reals);
  r.count = count;
  rule(key, r);
  YAML::Node v = lookup(key);
  std::vector<double> out = fallback;
  if (v.IsDefined()) {
    const std::string expected = "a list of " + std::to_string(count) + " finite numbers";
    if (!v.IsSequence() || v.size() != count) fail(key, expected);
    out.clear();
    for (const auto& item : v) {
      double d = 0;
      if (!item.IsScalar() || !parse_real(item.Scalar(), d)) fail(key, expected);
      out.push_back(d);
    }
  }
  record(key, Json::array_of(out));
  return out;
}

std::vector<double> DeckNode::real_list(const std::string& key, double min, std::size_t max_count) const {
  KeyRule r = make_rule(KeyRule::Kind::RealList, min, std::numeric_limits<double>::max());
  r.count = max_count;
  rule(key, r);
  YAML::Node v = lookup(key);
  std::vector<double> out;
  if (v.IsDefined()) {
    const std::string expected = "a list of at most " + std::to_string(max_count) + " finite numbers >= " + fmt(min);
    if (!v.IsSequence() || v.size() > max_count) fail(key, expected);
    for (const auto& item : v) {
      double d = 0;
      if (!item.IsScalar() || !parse_real(item.Scalar(), d) || d < min) fail(key, expected);
      out.push_back(d);
    }
  }
  record(key, Json::array_of(out));
  return out;
}

std::vector<std::string> DeckNode::choice_list(const std::string& key, const std::vector<std::string>& fallback,
                                               const std::vector<std::string>& options) const {
  KeyRule r = make_rule(KeyRule::Kind::ChoiceList);
  r.options = options;
  rule(key, r);
  YAML::Node v = lookup(key);
  std::vector<std::string> out = fallback;
  if (v.IsDefined()) {
    const std::string expected = "a list of names from " + join(options, " | ");
    if (!v.IsSequence()) fail(key, expected);
    out.clear();
    for (const auto& item : v) {
      bool ok = item.IsScalar();
      for (std::size_t i = 0; ok && i <= options.size(); ++i) {
        if (i == options.size()) ok = false;
        else if (options[i] == item.Scalar()) break;
      }
      if (!ok) fail(key, expected);
      out.push_back(item.Scalar());
    }
  }
  record(key, Json::array_of(out));
  return out;
}

std::string DeckNode::one_of(const std::vector<std::string>& alternatives) const {
  std::vector<std::string> present;
  for (const auto& a : alternatives) {
    deck_->known_.insert(full(a));
    if (has(a)) present.push_back(a);
  }
  if (present.size() != 1) {
    const std::string got = present.empty() ? "none" : join(present);
    throw UsageError(deck_->where(path_, node_) + ": " + path_ + ": got " + got + ", expected exactly one of " +
                     join(alternatives, " | "));
  }
  return present[0];
}

bool DeckNode::is_word(const std::string& key, const std::string& word) const {
  if (!has(key)) return false;
  const YAML::Node& cnode = node_;
  YAML::Node v = cnode[key];
  return v.IsScalar() && v.Scalar() == word;
}

}  // namespace kmini
