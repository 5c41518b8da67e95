#include "deck/deck.hpp"

#include "core/errors.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace kmini {

namespace {

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

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

std::string fmt(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

// ---------------------------------------------------------------- Deck ----

Deck Deck::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(path + ": cannot open deck file");
  try {
    return Deck(YAML::LoadFile(path), path);
  } catch (const YAML::Exception& e) {
    throw UsageError(path + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML (" + e.msg + ")");
  }
}

Deck Deck::from_text(const std::string& text, const std::string& origin) {
  try {
    return Deck(YAML::Load(text), origin);
  } catch (const YAML::Exception& e) {
    throw UsageError(origin + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML (" + e.msg + ")");
  }
}

void Deck::apply_set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  const std::string where = "--set " + assignment;
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size())
    throw UsageError(where + ": expected KEY=VALUE with a dotted key such as rk4.n=256");
  const std::string key = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw UsageError(where + ": value is not valid YAML (" + e.msg + ")");
  }
  std::vector<std::string> parts;
  std::stringstream ss(key);
  for (std::string p; std::getline(ss, p, '.');) {
    if (p.empty()) throw UsageError(where + ": empty component in key '" + key + "'");
    parts.push_back(p);
  }
  if (root_.IsNull()) root_ = YAML::Node(YAML::NodeType::Map);
  if (!root_.IsMap()) throw UsageError(where + ": the deck is not a map of sections");
  // yaml-cpp's Node::operator= assigns content; reset() rebinds the handle.
  YAML::Node node;
  node.reset(root_);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next;
    next.reset(node[parts[i]]);
    if (!next.IsDefined() || next.IsNull()) {
      node[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next.reset(node[parts[i]]);
    } else if (!next.IsMap()) {
      throw UsageError(where + ": '" + parts[i] + "' is not a section or map, cannot set '" + key + "'");
    }
    node.reset(next);
  }
  node[parts.back()] = value;
  set_from_[key] = where;
}

std::string Deck::where(const std::string& path, const YAML::Node& node) const {
  // The longest --set prefix of this path wins.
  for (auto it = set_from_.rbegin(); it != set_from_.rend(); ++it) {
    const std::string& p = it->first;
    if (path == p || (path.size() > p.size() && path.compare(0, p.size(), p) == 0 && path[p.size()] == '.'))
      return it->second;
  }
  if (node.IsDefined() && node.Mark().line >= 0) return origin_ + ":" + std::to_string(node.Mark().line + 1);
  return origin_;
}

void Deck::check_map(const YAML::Node& map, const std::string& path) const {
  for (const auto& kv : map) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    const std::string full = path.empty() ? key : path + "." + key;
    if (!used_.count(full)) {
      std::vector<std::string> siblings;
      const std::string prefix = path.empty() ? "" : path + ".";
      for (const auto& k : known_) {
        if (k.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = k.substr(prefix.size());
        if (!rest.empty() && rest.find('.') == std::string::npos) siblings.push_back(rest);
      }
      std::string msg = where(full, kv.first) + ": unknown key '" + full + "'";
      if (!siblings.empty()) msg += " (expected one of: " + join(siblings) + ")";
      throw UsageError(msg);
    }
    if (kv.second.IsMap()) check_map(kv.second, full);
  }
}

void Deck::check_all_keys_known() const {
  if (!root_.IsDefined() || root_.IsNull()) return;
  if (!root_.IsMap()) throw UsageError(origin_ + ": a deck is a map of sections (run, stream, ...)");
  check_map(root_, "");
}

// ------------------------------------------------------------ DeckNode ----

YAML::Node DeckNode::lookup(const std::string& key) const {
  deck_->known_.insert(full(key));
  if (!node_.IsDefined() || node_.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  if (!node_.IsMap())
    throw UsageError(deck_->where(path_, node_) + ": " + path_ + ": expected a map of keys");
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

DeckNode DeckNode::child(const std::string& key) const {
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
  if (v.IsScalar()) return v.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << v;
  return e.c_str();
}

void DeckNode::fail(const std::string& key, const std::string& expected) const {
  std::string got = has(key) ? value_text(key) : std::string();
  std::string msg = where(key) + ": " + full(key) + ": ";
  msg += has(key) ? (got.empty() ? "empty value" : "got '" + got + "'") : "missing";
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
  YAML::Node v = lookup(key);
  std::int64_t out = fallback;
  if (v.IsDefined()) {
    const std::string range = max == kNoMax ? ">= " + std::to_string(min)
                                            : "in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
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
  YAML::Node v = lookup(key);
  double out = fallback;
  if (v.IsDefined()) {
    const bool ok = v.IsScalar() && parse_real(v.Scalar(), out) && (min_exclusive ? out > min : out >= min) &&
                    out <= max;
    if (!ok) {
      std::string range = min_exclusive ? "> " + fmt(min) : ">= " + fmt(min);
      if (max < std::numeric_limits<double>::max()) range += " and <= " + fmt(max);
      fail(key, "a finite number " + range);
    }
  }
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
  YAML::Node v = lookup(key);
  std::string out = fallback;
  if (v.IsDefined()) {
    if (!v.IsScalar() || v.Scalar().empty()) fail(key, "a non-empty string");
    out = v.Scalar();
  }
  record(key, Json(out));
  return out;
}

std::string DeckNode::required_text(const std::string& key) const {
  if (!has(key)) {
    lookup(key);
    fail(key, "a non-empty string");
  }
  return text(key, "");
}

std::vector<double> DeckNode::reals(const std::string& key, const std::vector<double>& fallback,
                                    std::size_t count) const {
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

std::vector<std::string> DeckNode::choice_list(const std::string& key, const std::vector<std::string>& fallback,
                                               const std::vector<std::string>& options) const {
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
