#pragma once
// Echoing user-given text (deck values, keys, --set and option arguments) in
// kmini's one-line messages: control characters escaped, long text cut in the
// middle, so a 1 MB value or one with a newline still gives one readable line.
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace kmini {

inline bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Messages show at most this many characters of a value.
inline constexpr std::size_t kShownChars = 80;

// True for the bytes escape() rewrites: C0 controls and DEL.
inline bool is_control(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// One byte of text as a message shows it: \n, \r, \t, \xNN for other controls, "\\" for "\".
inline std::string escape_byte(char c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    case '\\': return "\\\\";
    default: break;
  }
  if (!is_control(c)) return std::string(1, c);
  char hex[8];
  std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(c)));
  return hex;
}

inline std::string escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) out += escape_byte(c);
  return out;
}

// escape(text), cut to about `max_chars` with "..." between its head and tail;
// never inside an escape or a UTF-8 sequence.
inline bool escaped_longer_than(const std::string& text, std::size_t max_chars) {
  std::size_t shown = 0;
  for (char c : text)
    if ((shown += escape_byte(c).size()) > max_chars) return true;
  return false;
}

inline std::string escape_cut(const std::string& text, std::size_t max_chars = kShownChars) {
  if (!escaped_longer_than(text, max_chars)) return escape(text);
  const std::size_t tail_room = max_chars / 4, head_room = max_chars - tail_room - 3;
  auto continuation = [&](std::size_t i) { return (static_cast<unsigned char>(text[i]) & 0xc0) == 0x80; };
  std::string head, tail;
  std::size_t h = 0;
  while (h < text.size() && head.size() + escape_byte(text[h]).size() <= head_room) head += escape_byte(text[h++]);
  while (h > 0 && h < text.size() && continuation(h)) head.resize(head.size() - escape_byte(text[--h]).size());
  std::size_t t = text.size();
  while (t > h && tail.size() + escape_byte(text[t - 1]).size() <= tail_room) tail.insert(0, escape_byte(text[--t]));
  while (t < text.size() && continuation(t)) tail.erase(0, escape_byte(text[t++]).size());
  return head + "..." + tail;
}

// 'text' for a message: escaped, cut, and followed by " (N chars)" when cut.
inline std::string quoted_value(const std::string& text, std::size_t max_chars = kShownChars) {
  std::string out = "'" + escape_cut(text, max_chars) + "'";
  if (escaped_longer_than(text, max_chars)) out += " (" + std::to_string(text.size()) + " chars)";
  return out;
}

// "a, b, c": the items of `v` with `sep` between them.
inline std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

}  // namespace kmini
