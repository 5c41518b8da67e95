#pragma once
// kmini's exit-status contract: 0 success, 1 verification or runtime failure,
// 2 bad usage, deck, key, value or input file.
#include <stdexcept>
#include <string>

namespace kmini {

enum ExitCode : int { kExitSuccess = 0, kExitFailure = 1, kExitUsage = 2 };

// Bad usage, deck, key, value or input file (exit 2). The message is one line
// that names the file/key/value and what was expected.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A verification failure or a runtime error such as non-finite state (exit 1).
struct RuntimeFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kmini
