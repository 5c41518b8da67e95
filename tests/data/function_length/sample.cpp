// Input of check_function_length.py --self-test (--max 10): expected.txt lists
// the functions it must report; everything else here it must not.
#include <cstdio>

namespace outer {  // a namespace longer than 10 lines: not a function

// Exactly 10 lines: at the limit, not reported.
int ten_lines(int x) {
  x += 1;
  x += 2;
  x += 3;
  x += 4;
  x += 5;
  x += 6;
  x += 7;
  return x;
}

// 11 lines: reported.
int eleven_lines(int x) {
  x += 1;
  x += 2;
  x += 3;
  x += 4;
  x += 5;
  x += 6;
  x += 7;
  x += 8;
  return x;
}

// Braces in comments, strings, characters and a raw string do not count as
// code: { { {
int braces_in_literals() {
  const char* a = "{{{";
  const char b = '{';
  const char* c = R"({ "json": { } })";
  int d = 1'000'000;  // a digit separator, not a character literal: '{'
  return a[0] + b + c[0] + d;
}

// A class longer than 10 lines, with short members and one long one.
class Widget {
 public:
  Widget() : a_{1}, b_(2) {}
  int a() const { return a_; }
  int b() const { return b_; }
  int long_member(int x) const {
    x += a_;
    x += b_;
    x += a_;
    x += b_;
    x += a_;
    x += b_;
    x += a_;
    x += b_;
    x += a_;
    return x;
  }

 private:
  int a_ = 0;
  int b_{0};
  int pad_[4] = {0, 0, 0, 0};
};

// A constructor whose initialiser list holds braces: reported under its name.
struct Holder {
  explicit Holder(int n) : values_{n, n + 1}, count_(n) {
    count_ += 1;
    count_ += 2;
    count_ += 3;
    count_ += 4;
    count_ += 5;
    count_ += 6;
    count_ += 7;
    count_ += 8;
    count_ += 9;
  }
  int values_[2];
  int count_;
};

// A functor's operator(), a template with a default argument, a trailing
// return type: reported.
struct Functor {
  void operator()(const int i, int& sum) const {
    sum += i;
    sum += i;
    sum += i;
    sum += i;
    sum += i;
    sum += i;
    sum += i;
    sum += i;
    sum += i;
  }
};

template <class T, class = void>
T templated(T x) {
  x += 1;
  x += 2;
  x += 3;
  x += 4;
  x += 5;
  x += 6;
  x += 7;
  x += 8;
  x += 9;
  return x;
}

auto trailing(int x) -> int {
  x += 1;
  x += 2;
  x += 3;
  x += 4;
  x += 5;
  x += 6;
  x += 7;
  x += 8;
  x += 9;
  return x;
}

// A lambda inside a function counts towards the function (reported once).
int with_lambda(int x) {
  auto add = [&](int y) {
    x += y;
    x += y;
    x += y;
    x += y;
    x += y;
  };
  add(1);
  add(2);
  add(3);
  return x;
}

// Long initialisers and an enum: not functions.
enum class Colour {
  red,
  green,
  blue,
  cyan,
  magenta,
  yellow,
  black,
  white,
  grey,
  orange,
};

const int kTable[] = {
    1,   // one
    2,   // two
    3,   // three
    4,   // four
    5,   // five
    6,   // six
    7,   // seven
    8,   // eight
    9,   // nine
    10,  // ten
};

}  // namespace outer

// Functions inside extern "C" are still found.
extern "C" {
int c_function(int x) {
#if defined(NEVER)
  x += 100;
#else
  x += 1;
#endif
  x += 2;
  x += 3;
  x += 4;
  x += 5;
  x += 6;
  return x;
}
}
