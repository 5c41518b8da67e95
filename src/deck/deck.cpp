#include "deck/deck.hpp"

#include "io/input_file.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <vector>

namespace kmini {

// A node on one line, in YAML flow style: "[1, 2]", "{a: 1, b: 2}".
std::string flow_text(const YAML::Node& v) {
  if (v.IsScalar()) return v.Scalar();
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << v;
  return e.c_str();
}

namespace {

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
  while (starts.lines.size() < 2 && parser.HandleNextDocument(starts)) {}
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
                  (seen.first->second == line
                       ? " (line " + std::to_string(line) + ")"
                       : " (lines " + std::to_string(seen.first->second) + " and " + std::to_string(line) + ")");
          else msg = origin_ + ": " + msg;
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
  const io::InputFile file(path, "a YAML deck file");
  return Deck(load_one_document(file.read_all(io::kMaxDeckBytes), path, "", true), path);
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
      throw UsageError(where + ": " + quoted_value(parts[i]) + " is not a section or map, cannot set " +
                       quoted_value(key));
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

namespace {

// The edit distance (insertions, deletions, substitutions, adjacent swaps) of a and b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

// The one candidate within two edits of `key` (a typo of a name of 4 or more
// characters), or "" where none or several are.
std::string closest(const std::string& key, const std::vector<std::string>& candidates) {
  if (key.size() < 4) return "";
  std::string best;
  std::size_t best_distance = 3, ties = 0;
  for (const auto& c : candidates) {
    const std::size_t e = edit_distance(key, c);
    if (e < best_distance) {
      best = c;
      best_distance = e;
      ties = 0;
    } else if (e == best_distance) {
      ++ties;
    }
  }
  return ties == 0 ? best : std::string();
}

}  // namespace

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
      const std::string close = closest(key, siblings);
      if (!close.empty()) msg += " (did you mean " + quoted_value(close) + "?)";
      else if (!siblings.empty()) msg += " (expected one of: " + join(siblings) + ")";
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

}  // namespace kmini
