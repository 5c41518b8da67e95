#pragma once
// Paths compiled into the test binaries (the source and build trees, kmini,
// mpiexec) are where CMake saw them. The GPU bundle (scripts/gpu/bundle.sh)
// runs the same binaries from another folder on another machine: its runner
// sets KMINI_RELOCATE="FROM=TO[;FROM=TO...]", and a compiled path that starts
// with a FROM is read under the matching TO (the first match wins). Unset, the
// compiled path is used as it is.
#include <cstdlib>
#include <string>

namespace kmini::test {

inline std::string relocated(const std::string& compiled) {
  const char* spec = std::getenv("KMINI_RELOCATE");
  if (spec == nullptr) return compiled;
  const std::string all(spec);
  std::size_t begin = 0;
  while (begin < all.size()) {
    std::size_t end = all.find(';', begin);
    if (end == std::string::npos) end = all.size();
    const std::string pair = all.substr(begin, end - begin);
    const std::size_t eq = pair.find('=');
    if (eq != std::string::npos && eq > 0) {
      const std::string from = pair.substr(0, eq);
      if (compiled.compare(0, from.size(), from) == 0 &&
          (compiled.size() == from.size() || compiled[from.size()] == '/'))
        return pair.substr(eq + 1) + compiled.substr(from.size());
    }
    begin = end + 1;
  }
  return compiled;
}

}  // namespace kmini::test
