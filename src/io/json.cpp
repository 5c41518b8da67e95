#include "io/json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace kmini {

void Json::push_back(Json value) {
  if (type_ == Type::Null) type_ = Type::Array;
  items_.push_back(std::move(value));
}

Json& Json::operator[](const std::string& key) {
  if (type_ == Type::Null) type_ = Type::Object;
  for (auto& m : members_)
    if (m.first == key) return m.second;
  members_.emplace_back(key, Json());
  return members_.back().second;
}

const Json* Json::find(const std::string& key) const {
  for (const auto& m : members_)
    if (m.first == key) return &m.second;
  return nullptr;
}

static void escape_to(std::string& out, const std::string& s) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

void Json::dump_to(std::string& out, int indent, int depth) const {
  const std::string pad = indent > 0 ? "\n" + std::string(static_cast<std::size_t>(indent * (depth + 1)), ' ') : "";
  const std::string close = indent > 0 ? "\n" + std::string(static_cast<std::size_t>(indent * depth), ' ') : "";
  switch (type_) {
    case Type::Null: out += "null"; break;
    case Type::Bool: out += bool_ ? "true" : "false"; break;
    case Type::Int: out += std::to_string(int_); break;
    case Type::Real: {
      if (!std::isfinite(real_)) {  // JSON has no NaN/Inf
        out += "null";
        break;
      }
      // Shortest of 15..17 significant digits that reads back exactly.
      char buf[32];
      for (int digits = 15; digits <= 17; ++digits) {
        std::snprintf(buf, sizeof buf, "%.*g", digits, real_);
        if (std::strtod(buf, nullptr) == real_) break;
      }
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      out += s;
      break;
    }
    case Type::String: escape_to(out, string_); break;
    case Type::Array: {
      // Short arrays of scalars stay on one line.
      bool flat = items_.size() <= 8;
      for (const auto& i : items_) flat = flat && i.type_ != Type::Array && i.type_ != Type::Object;
      out += '[';
      for (std::size_t k = 0; k < items_.size(); ++k) {
        if (k) out += flat ? ", " : ",";
        if (!flat) out += pad;
        items_[k].dump_to(out, indent, depth + 1);
      }
      if (!flat && !items_.empty()) out += close;
      out += ']';
      break;
    }
    case Type::Object: {
      out += '{';
      for (std::size_t k = 0; k < members_.size(); ++k) {
        if (k) out += ',';
        out += pad;
        escape_to(out, members_[k].first);
        out += indent > 0 ? ": " : ":";
        members_[k].second.dump_to(out, indent, depth + 1);
      }
      if (!members_.empty()) out += close;
      out += '}';
      break;
    }
  }
}

std::string Json::dump(int indent) const {
  std::string out;
  dump_to(out, indent, 0);
  return out;
}

}  // namespace kmini
