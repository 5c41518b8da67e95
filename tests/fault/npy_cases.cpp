// Mutated .npy families: valid input files that kmini accepts (see
// npy_controls), each made invalid by construction in one way. Every case
// must exit 2 with a line naming the file.
#include "case_support.hpp"
#include "deck_cases.hpp"

#include <algorithm>
#include <cstring>

namespace kmini::fault {

namespace {

// A valid input file, and the deck that reads it.
struct NpyBase {
  std::string file;   // its name in the case directory
  std::string key;    // the deck key naming it
  std::string descr;  // "<f8"
  std::vector<std::int64_t> shape;
  int major = 1;
  std::string data;
  std::vector<std::string> accepted;                      // descrs the key accepts
  std::vector<std::pair<std::string, std::string>> deck;  // more deck values ("" removes)
  bool binary = false;                                    // gram: every element 0 or 1

  std::string bytes() const { return npy_file(parts(), data); }
  NpyParts parts() const {
    NpyParts p;
    p.descr = descr;
    p.shape = shape_text(shape);
    p.major = major;
    return p;
  }
  std::size_t header_size() const { return npy_header(parts()).size(); }
  std::int64_t count() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
};

template <class T>
std::string random_values(Rng& rng, std::int64_t n, bool binary) {
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = binary ? T(rng.below(2)) : T(0.5 + static_cast<double>(rng.below(1000)) / 1000.0);
  return bytes_of(v);
}

std::string random_complex(Rng& rng, std::int64_t n, std::size_t part_size) {
  std::string out;
  for (std::int64_t i = 0; i < 2 * n; ++i) {
    const double x = 0.1 + static_cast<double>(rng.below(1000)) / 2000.0;
    if (part_size == 4) {
      const float f = static_cast<float>(x);
      out.append(reinterpret_cast<const char*>(&f), 4);
    } else {
      out.append(reinterpret_cast<const char*>(&x), 8);
    }
  }
  return out;
}

const std::vector<NpyBase>& bases() {
  static const std::vector<NpyBase> all = [] {
    Rng rng(20240909);
    std::vector<NpyBase> b;
    const std::vector<std::pair<std::string, std::string>> gram_deck{{"run.kernels", "[gram]"}, {"gram.A.random", ""}};
    b.push_back({"A_u1.npy",
                 "gram.A.file",
                 "|u1",
                 {8, 16},
                 1,
                 random_values<std::uint8_t>(rng, 128, true),
                 {"|u1", "<u1", "|b1", "<b1"},
                 gram_deck,
                 true});
    b.push_back({"A_bool.npy",
                 "gram.A.file",
                 "|b1",
                 {8, 16},
                 1,
                 random_values<std::uint8_t>(rng, 128, true),
                 {"|u1", "<u1", "|b1", "<b1"},
                 gram_deck,
                 true});
    b.push_back({"mult_by_f8.npy",
                 "discount.init.mult_by.file",
                 "<f8",
                 {3, 2},
                 1,
                 random_values<double>(rng, 6, false),
                 {"<f8", "<f4"},
                 {{"run.kernels", "[discount]"}},
                 false});
    b.push_back({"discount_f4.npy",
                 "discount.init.discount.file",
                 "<f4",
                 {2, 3, 2},
                 1,
                 random_values<float>(rng, 12, false),
                 {"<f8", "<f4"},
                 {{"run.kernels", "[discount]"}},
                 false});
    b.push_back({"F_c8.npy",
                 "rk4.init.F.file",
                 "<c8",
                 {8, 8},
                 1,
                 random_complex(rng, 64, 4),
                 {"<c8", "<c16"},
                 {{"run.kernels", "[rk4]"}},
                 false});
    b.push_back({"G_c16_v2.npy",
                 "rk4.init.G.file",
                 "<c16",
                 {8, 8},
                 2,
                 random_complex(rng, 64, 8),
                 {"<c8", "<c16"},
                 {{"run.kernels", "[rk4]"}},
                 false});
    return b;
  }();
  return all;
}

std::string deck_for(const NpyBase& b) {
  DeckTree d = base_deck();
  for (const auto& [p, v] : b.deck) {
    if (v.empty()) d.remove(p);
    else d.set(p, v);
  }
  d.set(b.key, b.file);
  return d.text();
}

BadCase npy_case(const NpyBase& b, const std::string& bytes, const std::string& what) {
  BadCase c;
  c.what = b.file + " (" + b.key + "): " + what;
  c.files = {CaseFile{"deck.yaml", deck_for(b), false}, CaseFile{b.file, bytes, false}};
  c.args = {"deck.yaml"};
  c.must_name = {b.file};
  return c;
}

std::string with_header_len(const NpyBase& b, std::uint64_t len) {
  std::string s = b.bytes();
  s[8] = static_cast<char>(len & 0xff);
  s[9] = static_cast<char>((len >> 8) & 0xff);
  if (b.major == 2) {
    s[10] = static_cast<char>((len >> 16) & 0xff);
    s[11] = static_cast<char>((len >> 24) & 0xff);
  }
  return s;
}

// The header and the file's data rewritten for another dtype (zeros).
std::string as_dtype(const NpyBase& b, const std::string& descr, bool fortran = false) {
  NpyParts p = b.parts();
  p.descr = descr;
  p.fortran = fortran;
  const std::size_t size = descr_item_size(descr);
  return npy_file(p, size ? std::string(static_cast<std::size_t>(b.count()) * size, '\0') : b.data);
}

std::string with_shape(const NpyBase& b, const std::string& shape) {
  NpyParts p = b.parts();
  p.shape = shape;
  return npy_file(p, b.data);
}

int two_adic(std::uint64_t v) {
  int k = 0;
  while (v && !(v & 1)) {
    v >>= 1;
    ++k;
  }
  return k;
}

// Shape text where dimension `at` grows by 2^64 / gcd(2^64, rest * itemsize):
// shape x itemsize wraps modulo 2^64 to exactly the bytes the file holds.
std::string wrapping_shape(const NpyBase& b, std::size_t at) {
  std::uint64_t rest = descr_item_size(b.descr);
  for (std::size_t i = 0; i < b.shape.size(); ++i)
    if (i != at) rest *= static_cast<std::uint64_t>(b.shape[i]);
  const int shift = 64 - two_adic(rest);
  std::vector<std::int64_t> s = b.shape;
  s[at] += std::int64_t(1) << std::min(shift, 62);
  return shape_text(s);
}

using Mutator = void (*)(Rng&, const NpyBase&, std::vector<BadCase>&);

std::vector<BadCase> over_bases(std::uint64_t seed, Mutator m) {
  Rng rng(seed);
  std::vector<BadCase> out;
  for (const auto& b : bases()) m(rng, b, out);
  return out;
}

void truncate(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  const std::string full = b.bytes();
  const std::size_t header = b.header_size();
  for (int i = 0; i < 6; ++i) {
    const std::size_t at = i < 2 ? rng.below(header) : header + rng.below(full.size() - header);
    out.push_back(npy_case(b, full.substr(0, at),
                           "truncated to " + std::to_string(at) + " of " + std::to_string(full.size()) + " bytes"));
  }
}

void append(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  for (std::size_t n : {std::size_t(1), 2 + rng.below(15), 17 + rng.below(184)}) {
    std::string extra;
    for (std::size_t i = 0; i < n; ++i) extra += static_cast<char>(rng.below(256));
    out.push_back(npy_case(b, b.bytes() + extra, std::to_string(n) + " bytes appended"));
  }
}

void magic(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  for (std::size_t pos : rng.sample(6, 2)) {
    std::string s = b.bytes();
    const char old = s[pos];
    do s[pos] = static_cast<char>(rng.below(256));
    while (s[pos] == old);
    out.push_back(npy_case(b, s, "magic byte " + std::to_string(pos) + " changed"));
  }
}

void version(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  const std::vector<std::pair<int, int>> versions{
      {0, 0}, {1, 1}, {2, 1}, {3, 0}, {255, 255}, {0, 1}, {b.major == 1 ? 2 : 1, 0}};
  for (std::size_t i : rng.sample(versions.size(), 3)) {
    std::string s = b.bytes();
    s[6] = static_cast<char>(versions[i].first);
    s[7] = static_cast<char>(versions[i].second);
    out.push_back(npy_case(b, s,
                           "version bytes " + std::to_string(versions[i].first) + "." +
                               std::to_string(versions[i].second) + " on a " + std::to_string(b.major) + ".0 layout"));
  }
}

void header_len(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  const std::uint64_t len = b.header_size() - (b.major == 1 ? 10 : 12);
  const std::uint64_t huge = b.major == 1 ? 0xffff : 0xffffffff;
  for (std::uint64_t v : {len + 1, len - 1, len + 2 + rng.below(63), std::uint64_t(0), huge})
    out.push_back(
        npy_case(b, with_header_len(b, v), "header_len " + std::to_string(v) + " instead of " + std::to_string(len)));
}

// A dict character replaced by a character that no header grammar allows there.
void dict_garbage(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  static const std::string garbage = "#@!$%&*?;~^`=+";
  const std::string full = b.bytes();
  const std::size_t start = b.major == 1 ? 10 : 12, end = full.find('}', start);
  for (std::size_t pos : rng.sample(end - start + 1, 5)) {
    std::string s = full;
    s[start + pos] = garbage[rng.below(garbage.size())];
    out.push_back(npy_case(b, s,
                           "dict byte '" + std::string(1, full[start + pos]) + "' at " + std::to_string(start + pos) +
                               " replaced by '" + s[start + pos] + "'"));
  }
}

void dict_quote(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  const std::string full = b.bytes();
  std::vector<std::size_t> quotes;
  for (std::size_t i = 0; i < b.header_size(); ++i)
    if (full[i] == '\'') quotes.push_back(i);
  for (std::size_t i : rng.sample(quotes.size(), 2)) {
    std::string s = full;
    s[quotes[i]] = ' ';
    out.push_back(npy_case(b, s, "quote at " + std::to_string(quotes[i]) + " removed (unterminated string)"));
  }
}

void dict_keys(Rng&, const NpyBase& b, std::vector<BadCase>& out) {
  for (const std::string key : {"descr", "fortran_order", "shape"}) {
    NpyParts p = b.parts();
    p.omit = {key};
    out.push_back(npy_case(b, npy_file(p, b.data), "dict without '" + key + "'"));
  }
  NpyParts p = b.parts();
  p.extra = "'foo': 1, ";
  out.push_back(npy_case(b, npy_file(p, b.data), "dict with an extra key 'foo'"));
}

void shape(Rng&, const NpyBase& b, std::vector<BadCase>& out) {
  auto s = b.shape;
  s[0] += 1;
  out.push_back(npy_case(b, with_shape(b, shape_text(s)), "shape " + shape_text(s) + ", data unchanged"));
  s = b.shape;
  s.back() *= 2;
  out.push_back(npy_case(b, with_shape(b, shape_text(s)), "shape " + shape_text(s) + ", data unchanged"));
  out.push_back(npy_case(b, with_shape(b, "()"), "shape () (a scalar), data unchanged"));
  std::string neg = shape_text(b.shape);
  neg.insert(1, "-");
  out.push_back(npy_case(b, with_shape(b, neg), "negative dimension " + neg));
  std::string big = "(99999999999999999999" + shape_text(b.shape).substr(shape_text(b.shape).find_first_of(",)"));
  out.push_back(npy_case(b, with_shape(b, big), "dimension beyond int64 " + big));
}

void shape_overflow(Rng&, const NpyBase& b, std::vector<BadCase>& out) {
  for (std::size_t at : {std::size_t(0), b.shape.size() - 1}) {
    const std::string s = wrapping_shape(b, at);
    out.push_back(npy_case(b, with_shape(b, s), "shape " + s + ": elements x itemsize wraps to the file's size"));
  }
  const std::string s = "(4, 4611686018427387904)";
  out.push_back(npy_case(b, with_shape(b, s), "shape " + s + ": the byte count wraps to 0"));
}

void ndim(Rng&, const NpyBase& b, std::vector<BadCase>& out) {
  auto s = b.shape;
  s.push_back(1);
  out.push_back(npy_case(b, with_shape(b, shape_text(s)), "a trailing 1: shape " + shape_text(s)));
  s = b.shape;
  s.insert(s.begin(), 1);
  out.push_back(npy_case(b, with_shape(b, shape_text(s)), "a leading 1: shape " + shape_text(s)));
  const std::vector<std::int64_t> flat{b.count()};
  out.push_back(npy_case(b, with_shape(b, shape_text(flat)), "flattened: shape " + shape_text(flat)));
}

void dtype(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  const std::vector<std::string> unsupported{"<f2", "<i2", "<U4", "|O", "<m8", "|V8", "<f16", "<u8", "|i1", "<u4"};
  for (std::size_t i : rng.sample(unsupported.size(), 2))
    out.push_back(npy_case(b, as_dtype(b, unsupported[i]), "unsupported dtype " + unsupported[i]));
  std::vector<std::string> wrong;
  for (const std::string d : {"|b1", "|u1", "<i4", "<i8", "<f4", "<f8", "<c8", "<c16"})
    if (std::find(b.accepted.begin(), b.accepted.end(), d) == b.accepted.end()) wrong.push_back(d);
  for (std::size_t i : rng.sample(wrong.size(), 2))
    out.push_back(npy_case(b, as_dtype(b, wrong[i]), "dtype " + wrong[i] + " where " + b.key + " needs another"));
  const std::string big = descr_item_size(b.descr) > 1 ? ">" + b.descr.substr(1) : ">f8";
  out.push_back(npy_case(b, as_dtype(b, big), "big-endian dtype " + big));
  out.push_back(npy_case(b, as_dtype(b, b.descr, true), "fortran_order True"));
}

void values(Rng& rng, const NpyBase& b, std::vector<BadCase>& out) {
  if (!b.binary) return;
  for (int i = 0; i < 4; ++i) {
    std::string s = b.bytes();
    const std::size_t at = rng.below(b.data.size());
    const int v = 2 + static_cast<int>(rng.below(254));
    s[b.header_size() + at] = static_cast<char>(v);
    out.push_back(npy_case(b, s, "element " + std::to_string(at) + " is " + std::to_string(v) + " (not 0 or 1)"));
  }
}

template <Mutator M>
std::vector<BadCase> mutation_family(std::uint64_t seed) {
  return over_bases(seed, M);
}

}  // namespace

std::vector<Family> npy_families() {
  return {
      {"npy.truncate", Where::InProcess, mutation_family<truncate>},
      {"npy.append", Where::InProcess, mutation_family<append>},
      {"npy.magic", Where::InProcess, mutation_family<magic>},
      {"npy.version", Where::InProcess, mutation_family<version>},
      {"npy.header_len", Where::InProcess, mutation_family<header_len>},
      {"npy.dict_garbage", Where::InProcess, mutation_family<dict_garbage>},
      {"npy.dict_quote", Where::InProcess, mutation_family<dict_quote>},
      {"npy.dict_keys", Where::InProcess, mutation_family<dict_keys>},
      {"npy.shape", Where::InProcess, mutation_family<shape>},
      {"npy.shape_overflow", Where::InProcess, mutation_family<shape_overflow>},
      {"npy.ndim", Where::InProcess, mutation_family<ndim>},
      {"npy.dtype", Where::InProcess, mutation_family<dtype>},
      {"npy.values", Where::InProcess, mutation_family<values>},
  };
}

std::vector<BadCase> npy_controls() {
  std::vector<BadCase> out;
  for (const auto& b : bases()) {
    BadCase c = npy_case(b, b.bytes(), "the valid file");
    c.family = "control";
    c.expect_exit = 0;
    c.must_name.clear();
    out.push_back(c);
  }
  return out;
}

}  // namespace kmini::fault
