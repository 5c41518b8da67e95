// Test tool: copies an rk4 checkpoint with one value changed, the way a
// damaged disk or a faulty writer would.
//   kmini_checkpoint_tamper IN OUT EDIT [--reseal]
// EDIT: flip:TARGET (flip the lowest bit), set:TARGET=VALUE, add:TARGET=VALUE
// (VALUE a number, nan or inf), or version1 (mark it format version 1, which
// had no checksum: version 1, checksum slots zero).
// TARGET: version, n, step, precision, flag, dt, g, sum_re_f, sum_im_f,
// sum_re_g, sum_im_g, delta.K (Re delta[K]), F.I / G.I (Re of element I), or
// @N (the N-th stored double). --reseal stores the checksum of the edited
// file, so that only the checks after the checksum can catch the edit.
#include "io/npy.hpp"
#include "rk4/rk4_checkpoint.hpp"

#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using kmini::rk4::checkpoint::kChecksumSlot;

std::uint64_t target_index(const std::string& t, const std::vector<double>& v) {
  const std::uint64_t header_rows = 7 + static_cast<std::uint64_t>(v.at(5));  // 6 fixed rows + delta[0..step]
  const auto after = [&](const std::string& prefix) { return std::stoull(t.substr(prefix.size())); };
  if (t == "version") return 1;
  if (t == "n") return 4;
  if (t == "step") return 5;
  if (t == "precision") return 8;
  if (t == "flag") return 9;
  if (t == "dt") return 12;
  if (t == "g") return 13;
  if (t == "sum_re_f") return 16;
  if (t == "sum_im_f") return 17;
  if (t == "sum_re_g") return 20;
  if (t == "sum_im_g") return 21;
  if (t.rfind("delta.", 0) == 0) return 4 * (6 + after("delta."));
  if (t.rfind("F.", 0) == 0) return 4 * (header_rows + after("F."));
  if (t.rfind("G.", 0) == 0) return 4 * (header_rows + after("G.")) + 2;
  if (t.rfind("@", 0) == 0) return after("@");
  throw std::invalid_argument("unknown target " + t);
}

double parse_value(const std::string& s) {
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  return std::stod(s);
}

void edit(std::vector<double>& v, const std::string& e) {
  if (e == "version1") {
    v.at(1) = 1;
    v.at(kChecksumSlot) = v.at(kChecksumSlot + 1) = 0;
    return;
  }
  const auto colon = e.find(':'), eq = e.find('=');
  const std::string op = e.substr(0, colon);
  const std::string target = e.substr(colon + 1, eq == std::string::npos ? std::string::npos : eq - colon - 1);
  double& x = v.at(target_index(target, v));
  if (op == "flip") {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    bits ^= 1;
    std::memcpy(&x, &bits, sizeof bits);
  } else if (op == "set" && eq != std::string::npos) {
    x = parse_value(e.substr(eq + 1));
  } else if (op == "add" && eq != std::string::npos) {
    x += parse_value(e.substr(eq + 1));
  } else {
    throw std::invalid_argument("bad edit " + e);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5 || (argc == 5 && std::strcmp(argv[4], "--reseal") != 0)) {
    std::fprintf(stderr, "usage: %s IN OUT EDIT [--reseal]\n", argv[0]);
    return 2;
  }
  try {
    const kmini::npy::Info info = kmini::npy::read_info(argv[1]);
    const auto z = kmini::npy::read_all<std::complex<double>>(info);
    std::vector<double> v(2 * z.size());
    std::memcpy(v.data(), z.data(), v.size() * sizeof(double));
    edit(v, argv[3]);
    if (argc == 5) kmini::rk4::checkpoint::reseal(v);
    kmini::npy::write(argv[2], kmini::npy::DType::C16, info.shape, v.data());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
  return 0;
}
