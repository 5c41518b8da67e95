#pragma once
// Failures only some ranks see (a file read, a write on rank 0) become the
// same exception on every rank, so no rank is left waiting in a collective
// that the others never reach (issue 9, finding 6).
#include "core/environment.hpp"
#include "core/errors.hpp"

#include <exception>
#include <string>

namespace kmini {

// Collective: runs body on every rank, then every rank throws the failure of
// the lowest failing rank (UsageError stays UsageError, anything else is a
// RuntimeFailure), or none does.
template <class Body>
void collectively(MPI_Comm comm, Body&& body) {
  int status = kExitSuccess;
  std::string message;
  try {
    body();
  } catch (const UsageError& e) {
    status = kExitUsage;
    message = e.what();
  } catch (const std::exception& e) {
    status = kExitFailure;
    message = e.what();
  }
  status = agree_on_status(comm, status, message);
  if (status == kExitUsage) throw UsageError(message);
  if (status != kExitSuccess) throw RuntimeFailure(message);
}

// Collective: body runs on rank 0 only (a plain-file output), every rank
// learns how it went.
template <class Body>
void on_root_collectively(MPI_Comm comm, Body&& body) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  collectively(comm, [&] {
    if (rank == 0) body();
  });
}

}  // namespace kmini
