#include "io/npy.hpp"
#include "test_support.hpp"

#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace kmini {

using npy::DType;

namespace {
std::string data(const std::string& name) { return std::string(KMINI_TEST_DATA) + "/npy/" + name; }
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
  std::string v3 = good;
  v3[6] = 3;
  test::write_bytes(p, v3);
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "version 3.0 is not supported (expected 1.0 or 2.0)");
  test::write_bytes(p, good.substr(0, good.size() - 8));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "truncated data: shape (3, 4) of f8 needs 96 bytes, the file holds 88");
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
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError,
                         "overflow.npy: shape (4, 4611686018427387904) of f8 is too large (overflows 64-bit byte count)");
  // 2^60 elements of 8 bytes: the element count fits, the bytes do not.
  test::write_bytes(p, header_only_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,), }"));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "of f8 is too large (overflows 64-bit byte count)");
  // Just below the limit it is an ordinary (truncated) file.
  test::write_bytes(p, header_only_npy("{'descr': '|u1', 'fortran_order': False, 'shape': (9223372036854775000,), }"));
  KMINI_EXPECT_THROW_MSG(npy::read_info(p), UsageError, "truncated data: shape (9223372036854775000,) of u1 needs");
  // A zero dimension makes any shape empty, and complete with no data.
  test::write_bytes(p, header_only_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4611686018427387904), }"));
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
