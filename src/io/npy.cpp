#include "io/npy.hpp"

#include "core/checked_size.hpp"
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "io/atomic_file.hpp"
#include "io/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace kmini::npy {

namespace {

struct DTypeEntry {
  DType dtype;
  const char* name;
  const char* descr;
  std::size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::Bool, "bool", "|b1", 1}, {DType::U1, "u1", "|u1", 1},     {DType::I4, "i4", "<i4", 4},
    {DType::I8, "i8", "<i8", 8},     {DType::F4, "f4", "<f4", 4},     {DType::F8, "f8", "<f8", 8},
    {DType::C8, "c8", "<c8", 8},     {DType::C16, "c16", "<c16", 16},
};
const DTypeEntry& entry(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e;
  return kDTypes[0];
}

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

[[noreturn]] void bad(const std::string& path, const std::string& what) { throw UsageError(path + ": " + what); }

// Parser for the header dict numpy writes, e.g.
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key " + quoted_value(key) + " in the header (expected descr, fortran_order, shape)");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_ws();
      if (peek() != '}') fail("malformed header dict");
    }
    ++pos_;
    skip_ws();
    if (pos_ != s_.size()) fail("malformed header: text after the dict");
    if (!have_descr || !have_order || !have_shape) fail("header lacks one of 'descr', 'fortran_order', 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad(path_, what); }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("malformed header: expected '") + c + "'");
    ++pos_;
  }
  std::string quoted() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"') fail("malformed header: expected a quoted string");
    const std::size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) fail("malformed header: unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("malformed header: fortran_order must be True or False");
  }
  Shape tuple() {
    Shape out;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      std::size_t digits = 0;
      std::int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("shape dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
        ++digits;
      }
      if (!digits) fail("malformed header: shape must be a tuple of non-negative integers");
      out.push_back(v);
      skip_ws();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("malformed header: shape must be a tuple of integers");
    }
    ++pos_;
    return out;
  }

  const std::string& path_;
  const std::string& s_;
  std::size_t pos_ = 0;
};

}  // namespace

std::size_t item_size(DType d) { return entry(d).size; }
const char* short_name(DType d) { return entry(d).name; }
const char* descr(DType d) { return entry(d).descr; }

std::string shape_string(const Shape& s) {
  std::vector<std::string> dims;
  for (const auto d : s) dims.push_back(std::to_string(d));
  return "(" + join(dims) + (s.size() == 1 ? ",)" : ")");  // numpy's (n,) for one dimension
}

std::uint64_t Info::element_count() const {
  // Checked: an Info may come from anywhere (read_info also checks the byte count).
  const auto n = checked_product(shape);
  if (!n) throw_size_overflow(path + ": shape " + shape_string(shape));
  return *n;
}

Info read_info(const std::string& path) {
  const io::InputFile in(path, "a .npy file");
  const std::uint64_t size = in.size();
  char pre[12] = {};
  // Read even from an empty file: a file that cannot be read says so (/proc/self/mem: EIO).
  const std::uint64_t got = in.read_up_to(0, pre, 8);
  io::refuse_compressed(path, pre, static_cast<std::size_t>(got), "a .npy file");
  if (got < 8 || size < 8 || std::memcmp(pre, kMagic, kMagicLen) != 0)
    bad(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  const int major = static_cast<unsigned char>(pre[6]);
  const int minor = static_cast<unsigned char>(pre[7]);
  std::uint64_t header_len = 0, prefix = 0;
  if (major == 1 && minor == 0) {
    prefix = 10;
    if (size < prefix) bad(path, "truncated header");
    in.read_exactly(8, pre + 8, 2);
    const auto* b = reinterpret_cast<const unsigned char*>(pre + 8);
    header_len = b[0] | (b[1] << 8);
  } else if (major == 2 && minor == 0) {
    prefix = 12;
    if (size < prefix) bad(path, "truncated header");
    in.read_exactly(8, pre + 8, 4);
    const auto* b = reinterpret_cast<const unsigned char*>(pre + 8);
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint64_t>(b[3]) << 24);
  } else {
    bad(path, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (expected 1.0 or 2.0)");
  }
  if (prefix + header_len > size) bad(path, "truncated header");
  std::string text(header_len, '\0');
  in.read_exactly(prefix, text.data(), header_len);

  std::string descr_text;
  bool fortran = false;
  Info info;
  info.path = path;
  HeaderParser(path, text).parse(descr_text, fortran, info.shape);
  if (fortran) bad(path, "Fortran-ordered arrays are not supported (expected C order; use np.ascontiguousarray)");
  if (!descr_text.empty() && descr_text[0] == '>')
    bad(path, "big-endian dtype " + quoted_value(descr_text) + " is not supported (expected little-endian)");
  bool known = false;
  for (const auto& e : kDTypes) {
    const std::string alt = std::string("<") + (e.descr + 1);  // '<u1' is as good as '|u1'
    if (descr_text == e.descr || (e.size == 1 && descr_text == alt)) {
      info.dtype = e.dtype;
      known = true;
    }
  }
  if (!known)
    bad(path, "unsupported dtype " + quoted_value(descr_text) + " (expected one of bool, u1, i4, i8, f4, f8, c8, c16)");
  info.data_offset = prefix + header_len;
  // Shape x item size must be a valid byte count before it is compared with the file.
  const auto elements = checked_product(info.shape);
  const auto want_bytes = elements ? checked_mul(*elements, item_size(info.dtype)) : std::nullopt;
  if (!want_bytes) throw_size_overflow(path + ": shape " + shape_string(info.shape) + " of " + short_name(info.dtype));
  const std::uint64_t want = *want_bytes;
  const std::uint64_t have = size - info.data_offset;
  if (have < want)
    bad(path, "truncated data: shape " + shape_string(info.shape) + " of " + short_name(info.dtype) + " needs " +
                  std::to_string(want) + " bytes, the file holds " + std::to_string(have));
  if (have > want)
    bad(path,
        "unexpected " + std::to_string(have - want) + " bytes after the data of shape " + shape_string(info.shape));
  return info;
}

void require_dtype(const Info& info, std::initializer_list<DType> allowed) {
  std::string names;
  for (DType d : allowed) {
    if (d == info.dtype) return;
    names += (names.empty() ? "" : " or ") + std::string(short_name(d));
  }
  bad(info.path, std::string("dtype ") + short_name(info.dtype) + " (expected " + names + ")");
}

void require_shape(const Info& info, const Shape& expected) {
  if (info.shape != expected)
    bad(info.path, "shape " + shape_string(info.shape) + " (expected " + shape_string(expected) + ")");
}

void read_elements(const Info& info, std::uint64_t first, std::uint64_t count, void* dst) {
  const std::size_t isz = item_size(info.dtype);
  const auto end = checked_add(first, count);
  const auto start = checked_mul(first, isz), bytes = checked_mul(count, isz);
  const auto offset = start ? checked_add(info.data_offset, *start) : std::nullopt;
  if (!end || *end > info.element_count() || !bytes || !offset) bad(info.path, "read past the end of the array");
  const io::InputFile in(info.path, "a .npy file");
  // The file must still hold what read_info saw (it may have been replaced).
  if (in.size() < *offset + *bytes) bad(info.path, "read past the end of the file (file changed?)");
  in.read_exactly(*offset, dst, *bytes);
}

std::size_t ElementType::size() const {
  std::size_t bytes = 0;
  for (const auto& f : fields_) bytes += item_size(f.dtype);
  return bytes;
}

std::string ElementType::descr_repr() const {
  if (!structured_) return std::string("'") + descr(fields_[0].dtype) + "'";
  std::string out = "[";
  for (std::size_t i = 0; i < fields_.size(); ++i)
    out += (i ? ", ('" : "('") + fields_[i].name + "', '" + descr(fields_[i].dtype) + "')";
  return out + "]";
}

std::string make_header(const ElementType& element, const Shape& shape) {
  std::string dict =
      "{'descr': " + element.descr_repr() + ", 'fortran_order': False, 'shape': " + shape_string(shape) + ", }";
  // numpy's spare room for the first dimension to grow to 21 digits.
  constexpr std::size_t kGrowthAxisMaxDigits = 21;
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Spaces and a newline so the data starts on a 64-byte boundary; numpy adds
  // 64 (not 0) when the text is already aligned. Version 2.0 when the length
  // does not fit version 1.0's 2 bytes.
  std::size_t prefix = 10;
  std::size_t padded = dict.size() + 1 + (64 - (prefix + dict.size() + 1) % 64);
  if (padded > 65535) {
    prefix = 12;
    padded = dict.size() + 1 + (64 - (prefix + dict.size() + 1) % 64);
  }
  dict.append(padded - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  const std::uint64_t len = dict.size();
  if (prefix == 10) {
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(len & 0xff);
    out += static_cast<char>((len >> 8) & 0xff);
  } else {
    out += '\x02';
    out += '\x00';
    for (int b = 0; b < 4; ++b) out += static_cast<char>((len >> (8 * b)) & 0xff);
  }
  return out + dict;
}

void write(const std::string& path, const ElementType& element, const Shape& shape, const void* data) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  AtomicFile f(path);
  f.write(make_header(element, shape));
  f.write(data, n * element.size());
  f.commit();
}

}  // namespace kmini::npy
