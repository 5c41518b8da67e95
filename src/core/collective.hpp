#pragma once
// Phases that every rank runs and agrees on, so that an error on some ranks
// (a failed allocation, an unreadable file) is the same error on all of them
// instead of ranks left waiting in a collective the failing ones never reach.
#include "core/environment.hpp"
#include "core/errors.hpp"

#include <mpi.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kmini {

// The exit status and one-line message for an exception that escaped `what`
// (a kernel's name): UsageError (2) and RuntimeFailure (1) keep their message;
// an allocation failure is 1 with "<what>: device allocation of <label>
// (<size>) failed: <reason>"; anything else is 1 with "<what>: <first line>"
// ("<first line>" alone when `what` is empty).
int describe_failure(const std::exception& e, const std::string& what, std::string& message);

// Inside a catch block: rethrows the exception being handled as a UsageError
// or RuntimeFailure of one line (describe_failure).
[[noreturn]] void rethrow_one_line(const std::string& what);

// Collective: every rank learns the worst status; unless it is success, every
// rank throws the error of the lowest rank that reported it.
void agree_or_throw(MPI_Comm comm, int status, const std::string& message);

// Collective: each rank's values of the arguments every rank must pass alike
// (name, value; a double as bits_of); std::invalid_argument on every rank
// naming the first that differs, so no rank runs another computation or
// another number of collectives than the others.
void agree_same(MPI_Comm comm, const std::vector<std::pair<std::string, std::int64_t>>& fields);
std::int64_t bits_of(double v);

// Runs `phase` on every rank and agrees on the outcome (agree_or_throw);
// returns what `phase` returns. Meant for allocation phases: one agreement per
// phase, never per step. `phase` must not enter a collective that a rank
// failing earlier in it would skip.
template <class Phase>
auto collectively(MPI_Comm comm, const std::string& what, Phase&& phase) -> decltype(phase()) {
  using Result = decltype(phase());
  int status = kExitSuccess;
  std::string message;
  if constexpr (std::is_void_v<Result>) {
    try {
      phase();
    } catch (const std::exception& e) {
      status = describe_failure(e, what, message);
    }
    agree_or_throw(comm, status, message);
  } else {
    std::optional<Result> result;
    try {
      result.emplace(phase());
    } catch (const std::exception& e) {
      status = describe_failure(e, what, message);
    }
    agree_or_throw(comm, status, message);
    return std::move(*result);
  }
}

// The same without a name to prefix: for phases whose errors already say what
// failed (a file read, a write on rank 0).
template <class Phase>
auto collectively(MPI_Comm comm, Phase&& phase) -> decltype(phase()) {
  return collectively(comm, std::string(), std::forward<Phase>(phase));
}

// Collective: `phase` runs on rank 0 only (a plain-file output); every rank
// learns how it went.
template <class Phase>
void on_root_collectively(MPI_Comm comm, Phase&& phase) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  collectively(comm, [&] {
    if (rank == 0) phase();
  });
}

}  // namespace kmini
