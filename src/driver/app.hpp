#pragma once
// The kmini program, callable from main() and from tests.
#include "core/environment.hpp"

#include <iosfwd>
#include <string>

namespace kmini {

// Runs kmini with the given arguments; returns the exit status every rank
// agreed on. Rank 0 prints the summary to `out` and errors to `err`.
int run_app(const Environment& env, int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace kmini
