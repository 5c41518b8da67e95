#include "core/collective.hpp"

#include "core/device_memory.hpp"
#include "core/format.hpp"
#include "core/kokkos_compat.hpp"

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

}  // namespace kmini
