#pragma once
// Gives a test process its own TMPDIR before MPI starts (see
// private_tmpdir.sh for why): a fresh directory under `base`, removed at exit.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace kmini::test {

inline void use_private_tmpdir(const std::string& base) {
  static std::string dir;
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  std::vector<char> name(base.begin(), base.end());
  const std::string pattern = "/tmp.XXXXXX";
  name.insert(name.end(), pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data())) return;  // keep the inherited TMPDIR
  dir = name.data();
  ::setenv("TMPDIR", dir.c_str(), 1);
  std::atexit([] {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  });
}

}  // namespace kmini::test
