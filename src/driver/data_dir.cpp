#include "driver/data_dir.hpp"

#include "core/errors.hpp"

#include <filesystem>
#include <system_error>

// Set for this file alone by src/CMakeLists.txt (configure-time paths).
#ifndef KMINI_SOURCE_DIR
#error "KMINI_SOURCE_DIR, KMINI_BUILD_BIN_DIR, KMINI_INSTALL_DATA_DIR and KMINI_DATA_FROM_BIN come from CMake"
#endif

namespace kmini {

namespace {

namespace fs = std::filesystem;

bool holds_decks(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "inputs" / "default.yaml", ec);
}

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);  // Linux; elsewhere only the configured prefix
  return ec ? fs::path() : exe.parent_path();
}

bool same_directory(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec);
}

}  // namespace

std::string data_dir() {
  const fs::path bin = executable_dir();
  const fs::path source = KMINI_SOURCE_DIR;
  if (!bin.empty() && same_directory(bin, KMINI_BUILD_BIN_DIR) && holds_decks(source)) return source.string();
  if (!bin.empty()) {
    const fs::path relocated = (bin / KMINI_DATA_FROM_BIN).lexically_normal();
    if (holds_decks(relocated)) return relocated.string();
  }
  const fs::path configured = KMINI_INSTALL_DATA_DIR;
  if (holds_decks(configured)) return configured.string();
  throw RuntimeFailure("no data directory: neither " + (bin / KMINI_DATA_FROM_BIN).lexically_normal().string() +
                       " nor " + configured.string() + " holds inputs/default.yaml (is kmini installed?)");
}

}  // namespace kmini
