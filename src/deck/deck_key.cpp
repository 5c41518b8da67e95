// DeckKey: a key as a kernel declares it (its *_declaration.cpp: kind,
// default, limits, options, help), and DeckNode's accessors that read a key
// as declared (the typed accessors themselves: deck_node.cpp).
#include "core/errors.hpp"
#include "core/format.hpp"
#include "core/text.hpp"
#include "deck/deck.hpp"

#include <string>
#include <utility>
#include <vector>

namespace kmini {

const char* kind_name(KeyRule::Kind k) {
  switch (k) {
    case KeyRule::Kind::Section: return "section";
    case KeyRule::Kind::Integer: return "integer";
    case KeyRule::Kind::Real: return "real";
    case KeyRule::Kind::ByteSize: return "byte_size";
    case KeyRule::Kind::Boolean: return "boolean";
    case KeyRule::Kind::Choice: return "choice";
    case KeyRule::Kind::Text: return "text";
    case KeyRule::Kind::OutputPath: return "output_path";
    case KeyRule::Kind::Reals: return "reals";
    case KeyRule::Kind::RealList: return "real_list";
    case KeyRule::Kind::ChoiceList: return "choice_list";
  }
  return "?";
}

namespace {

DeckKey make_key(std::string key, KeyRule::Kind kind, Json fallback, double min = 0, double max = 0) {
  DeckKey k;
  k.key = std::move(key);
  k.rule.kind = kind;
  k.rule.min = min;
  k.rule.max = max;
  k.fallback = std::move(fallback);
  return k;
}

constexpr double kIntegerNoMax = static_cast<double>(DeckNode::kNoMax);

std::int64_t integer_limit(double v) { return v >= kIntegerNoMax ? DeckNode::kNoMax : static_cast<std::int64_t>(v); }

}  // namespace

DeckKey DeckKey::section(std::string key, std::string help) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::Section, Json());
  k.help = std::move(help);
  return k;
}
DeckKey DeckKey::integer(std::string key, Json fallback, double min, double max) {
  return make_key(std::move(key), KeyRule::Kind::Integer, std::move(fallback), min, max);
}
DeckKey DeckKey::real(std::string key, Json fallback, double min, double max, bool min_exclusive) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::Real, std::move(fallback), min, max);
  k.rule.min_exclusive = min_exclusive;
  return k;
}
DeckKey DeckKey::byte_size(std::string key, Json fallback, double max) {
  return make_key(std::move(key), KeyRule::Kind::ByteSize, std::move(fallback), 1, max);
}
DeckKey DeckKey::boolean(std::string key, bool fallback) {
  return make_key(std::move(key), KeyRule::Kind::Boolean, Json(fallback));
}
DeckKey DeckKey::choice(std::string key, std::string fallback, std::vector<std::string> options) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::Choice, Json(std::move(fallback)));
  k.rule.options = std::move(options);
  return k;
}
DeckKey DeckKey::text(std::string key) { return make_key(std::move(key), KeyRule::Kind::Text, Json()); }
DeckKey DeckKey::output_path(std::string key, std::vector<std::string> suffixes, std::string fallback) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::OutputPath, fallback.empty() ? Json() : Json(fallback));
  k.rule.options = std::move(suffixes);
  return k;
}
DeckKey DeckKey::reals(std::string key, std::vector<double> fallback, std::size_t count) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::Reals, Json::array_of(fallback));
  k.rule.count = count;
  return k;
}
DeckKey DeckKey::real_list(std::string key, double min, std::size_t max_count) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::RealList, Json::array(), min, std::numeric_limits<double>::max());
  k.rule.count = max_count;
  return k;
}
DeckKey DeckKey::choice_list(std::string key, std::vector<std::string> fallback, std::vector<std::string> options) {
  DeckKey k = make_key(std::move(key), KeyRule::Kind::ChoiceList, Json::array_of(fallback));
  k.rule.options = std::move(options);
  return k;
}

Json DeckKey::to_json(const std::string& section) const {
  Json j = Json::object();
  j["key"] = section.empty() ? key : section + "." + key;
  j["type"] = kind_name(rule.kind);
  j["default"] = fallback;
  j["required"] = required;
  j["auto"] = auto_word;
  using K = KeyRule::Kind;
  const K kind = rule.kind;
  if (kind == K::Integer || kind == K::Real || kind == K::ByteSize || kind == K::RealList) {
    const bool no_max = kind == K::Integer ? rule.max >= kIntegerNoMax : rule.max >= std::numeric_limits<double>::max();
    if (kind == K::Integer) j["min"] = Json(static_cast<long long>(rule.min));
    else j["min"] = rule.min;
    if (no_max) j["max"] = Json();
    else if (kind == K::Integer) j["max"] = Json(static_cast<long long>(rule.max));
    else j["max"] = rule.max;
    if (kind == K::Real) j["min_exclusive"] = rule.min_exclusive;
  }
  if (kind == K::Choice || kind == K::ChoiceList) j["options"] = Json::array_of(rule.options);
  if (kind == K::OutputPath) j["suffixes"] = Json::array_of(rule.options);
  if (kind == K::Reals) j["count"] = Json(static_cast<long long>(rule.count));
  if (kind == K::RealList) j["max_count"] = Json(static_cast<long long>(rule.count));
  j["unit"] = unit;
  j["help"] = help;
  return j;
}

std::string DeckNode::declared(const DeckKey& k) const {
  const std::string name = k.name();
  const std::string path = full(name);
  if (!(path == k.key || ends_with(path, "." + k.key)))
    throw std::logic_error("deck key " + k.key + " read at " + path + " (a declaration does not match its reader)");
  return name;
}

DeckNode DeckNode::child(const DeckKey& k) const {
  const std::string name = declared(k);
  rule(name, k.rule);
  return child(name);
}

std::int64_t DeckNode::integer(const DeckKey& k) const {
  return integer(k, k.fallback.is_null() ? integer_limit(k.rule.min) : static_cast<std::int64_t>(k.fallback.as_real()));
}

std::int64_t DeckNode::integer(const DeckKey& k, std::int64_t fallback) const {
  const std::string name = declared(k);
  if (k.required) return required_integer(k, integer_limit(k.rule.max));
  const std::int64_t v = integer(name, fallback, integer_limit(k.rule.min), integer_limit(k.rule.max));
  rule(name, k.rule);
  return v;
}

std::int64_t DeckNode::required_integer(const DeckKey& k, std::int64_t max) const {
  const std::string name = declared(k);
  const std::int64_t v = required_integer(name, integer_limit(k.rule.min), max);
  rule(name, k.rule);
  return v;
}

double DeckNode::real(const DeckKey& k) const {
  const std::string name = declared(k);
  const double v = k.required ? required_real(name, k.rule.min, k.rule.max, k.rule.min_exclusive)
                              : real(name, k.fallback.as_real(), k.rule.min, k.rule.max, k.rule.min_exclusive);
  rule(name, k.rule);
  return v;
}

double DeckNode::byte_size(const DeckKey& k) const {
  const std::string name = declared(k);
  const double v = byte_size(name, k.fallback.is_null() ? 0 : k.fallback.as_real(), k.rule.max);
  rule(name, k.rule);
  return v;
}

bool DeckNode::boolean(const DeckKey& k) const {
  const std::string name = declared(k);
  const bool v = boolean(name, k.fallback.as_bool());
  rule(name, k.rule);
  return v;
}

std::string DeckNode::choice(const DeckKey& k) const {
  const std::string name = declared(k);
  const std::string v = choice(name, k.fallback.as_string(), k.rule.options);
  rule(name, k.rule);
  return v;
}

std::string DeckNode::text(const DeckKey& k) const {
  const std::string name = declared(k);
  const std::string v =
      k.required ? required_text(name) : text(name, k.fallback.is_null() ? "" : k.fallback.as_string());
  rule(name, k.rule);
  return v;
}

std::vector<double> DeckNode::reals(const DeckKey& k) const {
  const std::string name = declared(k);
  std::vector<double> fallback;
  for (const auto& v : k.fallback.items()) fallback.push_back(v.as_real());
  const std::vector<double> v = reals(name, fallback, k.rule.count);
  rule(name, k.rule);
  return v;
}

std::vector<double> DeckNode::real_list(const DeckKey& k) const {
  const std::string name = declared(k);
  const std::vector<double> v = real_list(name, k.rule.min, k.rule.count);
  rule(name, k.rule);
  return v;
}

std::string DeckNode::output_path(const DeckKey& k) const {
  const std::string name = declared(k);
  if (k.required) required_text(name);
  const std::string v = output_path(name, k.rule.options, k.fallback.is_null() ? "" : k.fallback.as_string());
  rule(name, k.rule);
  return v;
}

std::vector<std::string> DeckNode::choice_list(const DeckKey& k) const {
  const std::string name = declared(k);
  std::vector<std::string> fallback;
  for (const auto& v : k.fallback.items()) fallback.push_back(v.as_string());
  const std::vector<std::string> v = choice_list(name, fallback, k.rule.options);
  rule(name, k.rule);
  return v;
}

bool DeckNode::is_auto(const DeckKey& k) const {
  const std::string name = declared(k);
  if (has(name) && !is_word(name, "auto")) return false;
  text(name, "auto");
  rule(name, k.rule);
  return true;
}

}  // namespace kmini
