#include "io/npy.hpp"
#include "support/test_support.hpp"

#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include "support/relocated_path.hpp"

namespace kmini {

using npy::DType;

namespace {
std::string data(const std::string& name) { return kmini::test::relocated(KMINI_TEST_DATA) + "/npy/" + name; }
std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

// Files written by numpy 1.24 (tests/data/npy) are the independent reference.
TEST(Npy, ReadsFilesWrittenByNumpy) {
  auto f8 = npy::read_info(data("f8_3x4.npy"));
  EXPECT_EQ(f8.dtype, DType::F8);
  EXPECT_EQ(f8.shape, (npy::Shape{3, 4}));
  const auto v = npy::read_all<double>(f8);
  for (int i = 0; i < 12; ++i) EXPECT_EQ(v[i], 0.5 * i);

  const auto c8 = npy::read_all<std::complex<float>>(npy::read_info(data("c8_2x2.npy")));
  EXPECT_EQ(c8[0], std::complex<float>(1, 2));
  EXPECT_EQ(c8[1], std::complex<float>(3, -4));
  EXPECT_EQ(c8[2], std::complex<float>(0, 0.5f));

  auto b = npy::read_info(data("bool_5.npy"));
  EXPECT_EQ(b.dtype, DType::Bool);
  std::vector<std::uint8_t> bits(5);
  npy::read_elements(b, 0, 5, bits.data());
  EXPECT_EQ(bits, (std::vector<std::uint8_t>{1, 0, 1, 1, 0}));

  auto s = npy::read_info(data("i4_scalar.npy"));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(npy::read_all<std::int32_t>(s), std::vector<std::int32_t>{7});

  auto e = npy::read_info(data("u1_empty.npy"));
  EXPECT_EQ(e.shape, (npy::Shape{0, 3}));
  EXPECT_EQ(e.element_count(), 0u);

  const auto v2 = npy::read_all<std::int64_t>(npy::read_info(data("v2_i8_4.npy")));
  EXPECT_EQ(v2, (std::vector<std::int64_t>{-2, -1, 0, 1}));
}

TEST(Npy, HeaderIsByteIdenticalToNumpys) {
  const std::string file = slurp(data("f8_3x4.npy"));
  const std::string header = npy::make_header(DType::F8, {3, 4});
  ASSERT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header, file.substr(0, header.size()));
}

namespace {
// "f8" or "i:i8,j:i8,value:f4" (the names in numpy_headers.txt).
npy::ElementType element_type(const std::string& spec) {
  auto dtype = [](const std::string& name) {
    for (DType d : {DType::Bool, DType::U1, DType::I4, DType::I8, DType::F4, DType::F8, DType::C8, DType::C16})
      if (name == npy::short_name(d)) return d;
    ADD_FAILURE() << "unknown dtype " << name;
    return DType::U1;
  };
  if (spec.find(':') == std::string::npos) return dtype(spec);
  std::vector<npy::Field> fields;
  std::size_t at = 0;
  while (at < spec.size()) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size()), colon = spec.find(':', at);
    fields.push_back({spec.substr(at, colon - at), dtype(spec.substr(colon + 1, comma - colon - 1))});
    at = comma + 1;
  }
  return npy::ElementType(fields);
}

std::string unhex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return out;
}

const npy::ElementType kPairsF4(std::vector<npy::Field>{{"i", DType::I8}, {"j", DType::I8}, {"value", DType::F4}});

// The records of pairs_f4_3.npy (written by tests/data/npy/make_structured.py), packed as numpy packs them.
std::string pairs_f4_3_records() {
  std::string out;
  const std::int64_t i[] = {0, 0, 2}, j[] = {1, 5, 3};
  const float v[] = {0.5f, 0.25f, 1.0f};
  for (int r = 0; r < 3; ++r) {
    out.append(reinterpret_cast<const char*>(&i[r]), 8);
    out.append(reinterpret_cast<const char*>(&j[r]), 8);
    out.append(reinterpret_cast<const char*>(&v[r]), 4);
  }
  return out;
}
}  // namespace

// numpy 1.24's own headers (numpy_headers.txt, made by make_structured.py) for
// plain and structured element types and shapes whose spare growth room or
// alignment padding differ: every one byte-identical.
TEST(Npy, HeadersOfEveryElementTypeAndShapeAreNumpys) {
  std::ifstream in(data("numpy_headers.txt"));
  std::string spec, shape_text, hex;
  int lines = 0;
  while (in >> spec >> shape_text >> hex) {
    npy::Shape shape;
    if (shape_text != "-") {
      std::size_t at = 0;
      while (at <= shape_text.size()) {
        const std::size_t x = std::min(shape_text.find('x', at), shape_text.size());
        shape.push_back(std::stoll(shape_text.substr(at, x - at)));
        at = x + 1;
      }
    }
    EXPECT_EQ(npy::make_header(element_type(spec), shape), unhex(hex)) << spec << " " << shape_text;
    ++lines;
  }
  EXPECT_EQ(lines, 91);
}

TEST(Npy, StructuredArraysAreByteIdenticalToNumpys) {
  EXPECT_EQ(kPairsF4.size(), 20u);
  EXPECT_EQ(kPairsF4.descr_repr(), "[('i', '<i8'), ('j', '<i8'), ('value', '<f4')]");
  const std::string records = pairs_f4_3_records();
  const std::string path = test::work_path("pairs_f4_3.npy");
  npy::write(path, kPairsF4, {3}, records.data());
  EXPECT_EQ(slurp(path), slurp(data("pairs_f4_3.npy")));

  const npy::ElementType pairs_i4(std::vector<npy::Field>{{"i", DType::I8}, {"j", DType::I8}, {"value", DType::I4}});
  npy::write(path, pairs_i4, {0}, nullptr);
  EXPECT_EQ(slurp(path), slurp(data("pairs_i4_0.npy")));

  const npy::ElementType topk(std::vector<npy::Field>{{"j", DType::I8}, {"value", DType::F4}});
  std::string t;
  const std::int64_t j[] = {4, 2, -1, 0, 1, 3};
  const float v[] = {0.75f, 0.5f, 0.0f, 1.0f, 0.125f, 0.0f};
  for (int e = 0; e < 6; ++e) {
    t.append(reinterpret_cast<const char*>(&j[e]), 8);
    t.append(reinterpret_cast<const char*>(&v[e]), 4);
  }
  npy::write(path, topk, {2, 3}, t.data());
  EXPECT_EQ(slurp(path), slurp(data("topk_f4_2x3.npy")));
}

// A 1-D array appended in rounds before its length is known: the header
// written at the end is numpy's for the final length.
TEST(Npy, GrowingDistributedArrayGetsItsHeaderAtTheEnd) {
  const std::string records = pairs_f4_3_records();
  const std::string path = test::work_path("pairs_growing.npy");
  {
    npy::DistributedWriter w(MPI_COMM_WORLD, path, kPairsF4, npy::DistributedWriter::GrowingLength{});
    w.write_elements_round(2, 1, records.data() + 40);
    w.write_elements_round(0, 0, nullptr);
    w.write_elements_round(0, 2, records.data());
    w.commit(3);
  }
  EXPECT_EQ(slurp(path), slurp(data("pairs_f4_3.npy")));
  // A length that does not match what was written: the file is refused, not renamed into place.
  const std::string short_path = test::work_path("pairs_short.npy");
  std::filesystem::remove(short_path);
  {
    npy::DistributedWriter w(MPI_COMM_WORLD, short_path, kPairsF4, npy::DistributedWriter::GrowingLength{});
    w.write_elements_round(0, 2, records.data());
    KMINI_EXPECT_THROW_MSG(w.commit(3), RuntimeFailure, "the written file has 232 bytes, expected 252");
  }
  EXPECT_FALSE(std::filesystem::exists(short_path));
}

TEST(Npy, RoundTripsEveryDtype) {
  auto check = [](auto sample, DType d) {
    using T = decltype(sample);
    std::vector<T> in(6);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(sample * static_cast<T>(i + 1));
    const std::string path = test::work_path(std::string("roundtrip_") + npy::short_name(d) + ".npy");
    npy::write(path, d, {2, 3}, in.data());
    const auto info = npy::read_info(path);
    EXPECT_EQ(info.dtype, d);
    EXPECT_EQ(info.shape, (npy::Shape{2, 3}));
    std::vector<T> out(6);
    npy::read_elements(info, 0, 6, out.data());
    EXPECT_EQ(in, out) << npy::short_name(d);
  };
  check(std::uint8_t{1}, DType::Bool);
  check(std::uint8_t{7}, DType::U1);
  check(std::int32_t{-3}, DType::I4);
  check(std::int64_t{1} << 40, DType::I8);
  check(0.25f, DType::F4);
  check(1.0 / 3.0, DType::F8);
  check(std::complex<float>(1, -2), DType::C8);
  check(std::complex<double>(0.1, 3), DType::C16);
}

TEST(Npy, ReadsASliceOfElements) {
  const auto info = npy::read_info(data("f8_3x4.npy"));
  std::vector<double> row(4);
  npy::read_elements(info, 4, 4, row.data());
  EXPECT_EQ(row, (std::vector<double>{2.0, 2.5, 3.0, 3.5}));
}

TEST(Npy, RejectsMalformedFilesWithClearMessages) {
  KMINI_EXPECT_THROW_MSG(npy::read_info(data("fortran.npy")), UsageError, "Fortran-ordered");
  KMINI_EXPECT_THROW_MSG(npy::read_info(data("bigendian.npy")), UsageError, "big-endian dtype '>f8'");
  KMINI_EXPECT_THROW_MSG(npy::read_info(data("f2.npy")), UsageError, "unsupported dtype '<f2'");
  KMINI_EXPECT_THROW_MSG(npy::read_info(data("missing.npy")), UsageError, "missing.npy: cannot open");

  const std::string good = slurp(data("f8_3x4.npy"));
  const std::string p = test::work_path("bad.npy");
  test::write_bytes(p, "PK\x03\x04 not numpy at all");
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "bad.npy: not a .npy file (bad magic");
  test::write_bytes(p, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10));  // gzip's header
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "bad.npy: is gzip-compressed, expected a .npy file");
  std::string v3 = good;
  v3[6] = 3;
  test::write_bytes(p, v3);
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "version 3.0 is not supported (expected 1.0 or 2.0)");
  test::write_bytes(p, good.substr(0, good.size() - 8));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError,
                         "truncated data: shape (3, 4) of f8 needs 96 bytes, the file holds 88");
  test::write_bytes(p, good + "xx");
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "unexpected 2 bytes after the data");
  test::write_bytes(p, good.substr(0, 20));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "truncated header");
  std::string odd = good;
  odd.replace(odd.find("'shape'"), 7, "'shope'");
  test::write_bytes(p, odd);
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "unexpected key 'shope'");
}

TEST(Npy, EchoedHeaderTextIsEscapedAndCut) {
  // A version-1 .npy whose dtype string is 1000 characters with a newline in it.
  const std::string descr = "<f\n" + std::string(997, 'z');
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }";
  while ((10 + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(dict.size() & 0xff);
  bytes += static_cast<char>(dict.size() >> 8);
  const std::string p = test::work_path("long_descr.npy");
  test::write_bytes(p, bytes + dict + std::string(8, '\0'));
  try {
    npy::read_info(p);
    ADD_FAILURE() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), p + ": unsupported dtype '<f\\n" + std::string(53, 'z') + "..." +
                                         std::string(20, 'z') +
                                         "' (1000 chars) (expected one of bool, u1, i4, i8, f4, f8, c8, c16)");
  }
}

// A header whose shape x item size does not fit a 64-bit byte count is
// rejected as such, never taken for a complete (empty or wrapped) array.
namespace {
std::string header_only_npy(const std::string& dict) {
  std::string text = dict;
  text.append(128 - 10 - dict.size() - 1, ' ');
  text += '\n';
  const std::string prefix = std::string("\x93NUMPY\x01\x00", 8) + char(text.size() & 0xff) + char(text.size() >> 8);
  return prefix + text;
}
}  // namespace

TEST(Npy, ShapesThatOverflowTheByteCountAreUsageErrors) {
  const std::string p = test::work_path("overflow.npy");
  const std::string file =
      header_only_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4, 4611686018427387904), }");
  ASSERT_EQ(file.size(), 128u);
  test::write_bytes(p, file);
  KMINI_EXPECT_THROW_MSG(
      npy::read_info(p), UsageError,
      "overflow.npy: shape (4, 4611686018427387904) of f8 is too large (overflows 64-bit byte count)");
  // 2^60 elements of 8 bytes: the element count fits, the bytes do not.
  test::write_bytes(p, header_only_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,), }"));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "of f8 is too large (overflows 64-bit byte count)");
  // Just below the limit it is an ordinary (truncated) file.
  test::write_bytes(p, header_only_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775000,), }"));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "truncated data: shape (9223372036854775000,) of u1 needs");
  // A zero dimension makes any shape empty, and complete with no data.
  test::write_bytes(p,
                    header_only_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904), }"));
  EXPECT_EQ(npy::read_info(p).element_count(), 0u);

  npy::Info info;
  info.path = "made.npy";
  info.shape = {4, 4611686018427387904};
  KMINI_EXPECT_THROW_MSG(info.element_count(), UsageError, "made.npy: shape (4, 4611686018427387904) is too large");
}

TEST(Npy, ReadsPastTheEndAreRefusedEvenWhenTheRangeWraps) {
  const auto info = npy::read_info(data("f8_3x4.npy"));
  double x = 0;
  KMINI_EXPECT_THROW_MSG(npy::read_elements(info, 12, 1, &x), UsageError, "read past the end of the array");
  KMINI_EXPECT_THROW_MSG(npy::read_elements(info, ~std::uint64_t(0), 2, &x), UsageError, "read past the end");
  KMINI_EXPECT_THROW_MSG(npy::read_elements(info, std::uint64_t(1) << 61, 1, &x), UsageError, "read past the end");
}

TEST(Npy, RequireDtypeAndShapeNameTheFile) {
  const auto info = npy::read_info(data("f8_3x4.npy"));
  KMINI_EXPECT_THROW_MSG(npy::require_dtype(info, {DType::C8, DType::C16}), UsageError,
                         "f8_3x4.npy: dtype f8 (expected c8 or c16)");
  KMINI_EXPECT_THROW_MSG(npy::require_shape(info, {4, 4}), UsageError, "f8_3x4.npy: shape (3, 4) (expected (4, 4))");
  EXPECT_NO_THROW(npy::require_shape(info, {3, 4}));
}

TEST(Npy, WritesAreAtomic) {
  const std::string dir = test::work_path("atomic");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<double> v{1, 2};
  npy::write(dir + "/a.npy", DType::F8, {2}, v.data());
  // Only the finished file is there, no temporaries.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    ++files;
    EXPECT_EQ(e.path().filename(), "a.npy");
  }
  EXPECT_EQ(files, 1);
  // Output paths are validated before a run (exit 2); a directory that vanished since is a runtime failure.
  KMINI_EXPECT_THROW_MSG(npy::write(dir + "/no/such/dir/b.npy", DType::F8, {2}, v.data()), RuntimeFailure,
                         "b.npy: cannot create the temporary output file (No such file or directory)");
}

}  // namespace kmini
