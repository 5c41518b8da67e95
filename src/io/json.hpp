#pragma once
// A small ordered JSON value for results.json and the resolved deck.
// Objects keep insertion order so files read the way the deck was written.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace kmini {

class Json {
 public:
  enum class Type { Null, Bool, Int, Real, String, Array, Object };

  Json() = default;  // null
  Json(std::nullptr_t) {}
  Json(bool b) : type_(Type::Bool), bool_(b) {}
  Json(int i) : type_(Type::Int), int_(i) {}
  Json(long i) : type_(Type::Int), int_(i) {}
  Json(long long i) : type_(Type::Int), int_(i) {}
  Json(unsigned long i) : type_(Type::Int), int_(static_cast<std::int64_t>(i)) {}
  Json(unsigned long long i) : type_(Type::Int), int_(static_cast<std::int64_t>(i)) {}
  Json(double d) : type_(Type::Real), real_(d) {}
  Json(const char* s) : type_(Type::String), string_(s) {}
  Json(std::string s) : type_(Type::String), string_(std::move(s)) {}

  static Json array() {
    Json j;
    j.type_ = Type::Array;
    return j;
  }
  static Json object() {
    Json j;
    j.type_ = Type::Object;
    return j;
  }
  template <class T>
  static Json array_of(const std::vector<T>& values) {
    Json j = array();
    for (const auto& v : values) j.push_back(Json(v));
    return j;
  }

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::Null; }
  bool as_bool() const { return bool_; }
  std::int64_t as_int() const { return int_; }
  double as_real() const { return type_ == Type::Int ? static_cast<double>(int_) : real_; }
  const std::string& as_string() const { return string_; }
  const std::vector<Json>& items() const { return items_; }
  const std::vector<std::pair<std::string, Json>>& members() const { return members_; }

  void push_back(Json value);
  // Object member access; inserts null at the end when the key is new (turns a null into an object).
  Json& operator[](const std::string& key);
  const Json* find(const std::string& key) const;

  std::string dump(int indent = 2) const;

 private:
  void dump_to(std::string& out, int indent, int depth) const;

  Type type_ = Type::Null;
  bool bool_ = false;
  std::int64_t int_ = 0;
  double real_ = 0.0;
  std::string string_;
  std::vector<Json> items_;
  std::vector<std::pair<std::string, Json>> members_;
};

}  // namespace kmini
