#include "core/collective.hpp"

#include "core/device_memory.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"

#include <cstring>
#include <stdexcept>

namespace kmini {

int describe_failure(const std::exception& e, const std::string& what, std::string& message) {
  if (dynamic_cast<const UsageError*>(&e)) {
    message = e.what();
    return kExitUsage;
  }
  if (dynamic_cast<const RuntimeFailure*>(&e)) {
    message = e.what();
    return kExitFailure;
  }
  const std::string prefix = what.empty() ? "" : what + ": ";
  if (const auto f = compat::allocation_failure(e)) {
    message = prefix + "device allocation";
    if (!f->label.empty()) message += " of " + f->label;
    if (f->bytes >= 0) message += " (" + format_bytes(f->bytes) + ")";
    message += " failed: " + f->reason;
    return kExitFailure;
  }
  const std::string text = e.what() ? e.what() : "";
  message = prefix + text.substr(0, text.find('\n'));
  return kExitFailure;
}

void rethrow_one_line(const std::string& what) {
  try {
    throw;
  } catch (const UsageError&) {
    throw;
  } catch (const RuntimeFailure&) {
    throw;
  } catch (const std::exception& e) {
    std::string message;
    if (describe_failure(e, what, message) == kExitUsage) throw UsageError(message);
    throw RuntimeFailure(message);
  }
}

void agree_or_throw(MPI_Comm comm, int status, const std::string& message) {
  std::string agreed = message;
  status = agree_on_status(comm, status, agreed);
  if (status == kExitUsage) throw UsageError(agreed);
  if (status != kExitSuccess) throw RuntimeFailure(agreed);
}

void agree_same(MPI_Comm comm, const std::vector<std::pair<std::string, std::int64_t>>& fields) {
  int ranks = 1;
  MPI_Comm_size(comm, &ranks);
  const int n = static_cast<int>(fields.size());
  std::vector<std::int64_t> mine, all(static_cast<std::size_t>(n) * static_cast<std::size_t>(ranks));
  for (const auto& f : fields) mine.push_back(f.second);
  MPI_Allgather(mine.data(), n, MPI_INT64_T, all.data(), n, MPI_INT64_T, comm);
  for (int f = 0; f < n; ++f)
    for (int q = 1; q < ranks; ++q)
      if (all[static_cast<std::size_t>(q * n + f)] != all[static_cast<std::size_t>(f)])
        throw std::invalid_argument(fields[static_cast<std::size_t>(f)].first + ": rank " + std::to_string(q) +
                                    " passed another value than rank 0, expected the same on every rank");
}

std::int64_t bits_of(double v) {
  std::int64_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

}  // namespace kmini
