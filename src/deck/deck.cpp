#include "deck/deck.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"

#include <yaml-cpp/eventhandler.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
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

// A node on one line, in YAML flow style: "[1, 2]", "{a: 1, b: 2}".
std::string flow_text(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << v;
  return e.c_str();
}

// Where each document of a YAML stream starts (its "---" line, 0-based).
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<int> lines;
  void OnDocumentStart(const YAML::Mark& mark) override { lines.push_back(mark.line); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// 1-based line where the second document of `text` starts; 0 when unknown.
int second_document_line(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (starts.lines.size() < 2 && parser.HandleNextDocument(starts)) {
  }
  return starts.lines.size() >= 2 && starts.lines[1] >= 0 ? starts.lines[1] + 1 : 0;
}

// yaml-cpp keeps both pairs of a key given twice (and lookups see the first):
// walks every map and sequence and rejects the second one.
class UniqueKeys {
 public:
  UniqueKeys(const std::string& origin, bool lines) : origin_(origin), lines_(lines) {}

  void check(const YAML::Node& node, const std::string& path) {
    // Aliases share nodes: a small deck can expand enormously when walked.
    if (++visited_ > kMaxVisited)
      throw UsageError(origin_ + ": the deck expands to more than " + std::to_string(kMaxVisited) +
                       " YAML nodes (aliases?)");
    if (node.IsSequence()) {
      for (std::size_t i = 0; i < node.size(); ++i) check(node[i], path + "[" + std::to_string(i) + "]");
    } else if (node.IsMap()) {
      std::map<std::string, int> first_line;
      for (const auto& kv : node) {
        const std::string key = flow_text(kv.first);
        const std::string full = path.empty() ? key : path + "." + key;
        const int line = kv.first.Mark().line + 1;
        const auto seen = first_line.emplace(key, line);
        if (!seen.second) {
          const std::string what = path.empty() && lines_ ? "section" : "key";
          std::string msg = escape_cut(full) + ": " + what + " given twice";
          if (lines_)
            msg = origin_ + ":" + std::to_string(line) + ": " + msg +
                  (seen.first->second == line ? " (line " + std::to_string(line) + ")"
                                              : " (lines " + std::to_string(seen.first->second) + " and " +
                                                    std::to_string(line) + ")");
          else
            msg = origin_ + ": " + msg;
          throw UsageError(msg);
        }
        check(kv.second, full);
      }
    }
  }

 private:
  static constexpr long kMaxVisited = 1000000;
  const std::string& origin_;
  bool lines_;
  long visited_ = 0;
};

// YAML allows no C0 control character but tab, LF and CR, and no DEL;
// yaml-cpp takes them into values (a file name with U+0001 in it).
void check_printable(const std::string& text, const std::string& origin) {
  int line = 1;
  for (char c : text) {
    if (c == '\n') ++line;
    if (is_control(c) && c != '\t' && c != '\n' && c != '\r')
      throw UsageError(origin + ":" + std::to_string(line) + ": control character " + quoted_value(std::string(1, c)) +
                       " in the deck, expected printable text (YAML allows only tab and line breaks)");
  }
}

// yaml-cpp ends a quoted scalar that runs into the end of the text without an
// error ("C.npy" with its closing quote missing on the last line is taken as
// C.npy): every quoted scalar must have its closing quote in the text.
class ClosedQuotes {
 public:
  ClosedQuotes(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}
  void check(const YAML::Node& node) {
    if (++visited_ > kMaxVisited) return;
    if (node.IsMap()) {
      for (const auto& kv : node) {
        check(kv.first);
        check(kv.second);
      }
    } else if (node.IsSequence()) {
      for (const auto& item : node) check(item);
    } else if (node.IsScalar()) {
      check_scalar(node);
    }
  }

 private:
  void check_scalar(const YAML::Node& node) const {
    const auto mark = node.Mark();
    if (mark.pos < 0 || static_cast<std::size_t>(mark.pos) >= text_.size()) return;
    const char quote = text_[static_cast<std::size_t>(mark.pos)];
    if (quote != '"' && quote != '\'') return;
    for (std::size_t i = static_cast<std::size_t>(mark.pos) + 1; i < text_.size(); ++i) {
      if (quote == '"' && text_[i] == '\\') {
        ++i;  // an escape: the next character is not a closing quote
      } else if (text_[i] == quote) {
        if (quote == '\'' && i + 1 < text_.size() && text_[i + 1] == '\'') {
          ++i;  // '' inside single quotes is one quote
        } else {
          return;
        }
      }
    }
    throw UsageError(origin_ + ":" + std::to_string(mark.line + 1) + ": unterminated " +
                     (quote == '"' ? "double" : "single") + "-quoted value, expected a closing " + quote);
  }

  static constexpr long kMaxVisited = 1000000;
  const std::string& text_;
  const std::string& origin_;
  long visited_ = 0;
};

// A name in a --set key: letters, digits, '_' and '-'.
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

}  // namespace

// ---------------------------------------------------------------- Deck ----

YAML::Node Deck::load_one_document(const std::string& text, const std::string& origin, const std::string& path,
                                   bool lines) {
  std::vector<YAML::Node> documents;
  if (lines) check_printable(text, origin);
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    if (!lines) throw UsageError(origin + ": value is not valid YAML (" + e.msg + ")");
    throw UsageError(origin + ":" + std::to_string(e.mark.line + 1) + ": invalid YAML (" + e.msg + ")");
  }
  if (documents.size() > 1) {
    const int line = second_document_line(text);
    if (!lines) throw UsageError(origin + ": the value holds more than one YAML document");
    throw UsageError(origin + (line > 0 ? ":" + std::to_string(line) : std::string()) +
                     ": a second YAML document starts here; a deck is one document");
  }
  YAML::Node root = documents.empty() ? YAML::Node() : documents.front();  // an empty file: no keys
  UniqueKeys(origin, lines).check(root, path);
  if (lines) ClosedQuotes(text, origin).check(root);
  return root;
}

Deck Deck::from_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw UsageError(path + ": is a directory, expected a YAML deck file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open deck file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(path + ": cannot read deck file");
  return Deck(load_one_document(text.str(), path, "", true), path);
}

Deck Deck::from_text(const std::string& text, const std::string& origin) {
  return Deck(load_one_document(text, origin, "", true), origin);
}

void Deck::apply_set(const std::string& assignment) {
  const auto eq = assignment.find('=');
  const std::string where = "--set " + escape_cut(assignment);
  if (eq == std::string::npos || eq == 0 || eq + 1 == assignment.size())
    throw UsageError(where + ": expected KEY=VALUE with a dotted key such as rk4.n=256");
  const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  // The key: names joined by single dots ("rk4.n." or "rk4..n" would silently set something else).
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const auto dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (parts.back().empty())
      throw UsageError(where + ": empty component in key " + quoted_value(key) +
                       ", expected names joined by single dots such as rk4.init.F");
    for (char c : parts.back())
      if (!is_name_char(c))
        throw UsageError(where + ": key " + quoted_value(key) + " contains " + quoted_value(std::string(1, c)) +
                         ", expected names of letters, digits, _ and - joined by dots");
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  // The value: YAML on one line (a newline could start a second document).
  for (std::size_t i = 0; i < text.size(); ++i)
    if (is_control(text[i]) && text[i] != '\t')
      throw UsageError(where + ": the value contains the control character " + quoted_value(std::string(1, text[i])) +
                       " at offset " + std::to_string(i) + ", expected YAML on one line");
  YAML::Node value = load_one_document(text, where, key, false);
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
      throw UsageError(where + ": " + quoted_value(parts[i]) + " is not a section or map, cannot set " + quoted_value(key));
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
  // A section or map without a line in the deck: a --set below it created it.
  for (const auto& [p, set] : set_from_)
    if (p.size() > path.size() && p.compare(0, path.size(), path) == 0 && p[path.size()] == '.') return set;
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
      std::string msg = where(full, kv.first) + ": unknown key " + quoted_value(full);
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

bool DeckNode::empty() const { return !node_.IsDefined() || node_.IsNull() || (node_.IsMap() && node_.size() == 0); }

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

std::vector<double> DeckNode::real_list(const std::string& key, double min, std::size_t max_count) const {
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
