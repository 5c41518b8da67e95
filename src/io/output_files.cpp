#include "io/output_files.hpp"

#include "core/collective.hpp"
#include "core/errors.hpp"
#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <climits>
#include <filesystem>

namespace kmini {

namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string name_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

void check_output_file(const OutputFile& given) {
  if (given.path.empty()) throw UsageError(given.origin + ": cannot write '': expected a file name");
  OutputFile out = given;  // where it is written: through a link (output_target)
  try {
    out.path = output_target(given.path);
  } catch (const RuntimeFailure& e) {
    throw UsageError(given.origin + ": cannot write " + e.what());
  }
  const std::string via = out.path == given.path ? "" : " (a symbolic link to '" + out.path + "')";
  const auto fail = [&](const std::string& why) {
    throw UsageError(given.origin + ": cannot write '" + given.path + "'" + via + ": " + why);
  };
  struct stat st;
  const std::string dir = directory_of(out.path), name = name_of(out.path);
  if (name.empty() || name == "." || name == "..") fail("expected a file name, not a directory");
  if (::stat(dir.c_str(), &st) != 0) fail("directory '" + dir + "' does not exist (" + os_error_text(errno) + ")");
  if (!S_ISDIR(st.st_mode)) fail("'" + dir + "' is not a directory");
  long name_max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  if (static_cast<long>(name.size()) > name_max)
    fail("the file name has " + std::to_string(name.size()) + " characters, the file system allows " +
         std::to_string(name_max));
  if (out.path.size() + 64 >= PATH_MAX)
    fail("the path has " + std::to_string(out.path.size()) + " characters (expected fewer than " +
         std::to_string(PATH_MAX - 64) + ")");
  if (::stat(out.path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail("it is a directory");
    if (!S_ISREG(st.st_mode)) fail("it exists and is not a regular file");
  }
  // The real test of the directory: create and remove a probe file the way
  // the writers will (read-only file systems, permissions, ACLs, quotas on inodes).
  const std::string probe = temporary_name_for(out.path);
  termination::TemporaryFile registration(probe);
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) fail("cannot create files in '" + dir + "' (" + os_error_text(errno) + ")");
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_output_files_here(const std::vector<OutputFile>& outs) {
  for (std::size_t i = 0; i < outs.size(); ++i) {
    check_output_file(outs[i]);
    const auto canonical = std::filesystem::weakly_canonical(outs[i].path);
    for (std::size_t j = 0; j < i; ++j)
      if (std::filesystem::weakly_canonical(outs[j].path) == canonical)
        throw UsageError(outs[i].origin + ": cannot write '" + outs[i].path + "': it is also the output of " +
                         outs[j].origin);
  }
}

void check_output_files(MPI_Comm comm, const std::vector<OutputFile>& outs) {
  collectively(comm, [&] { check_output_files_here(outs); });
}

}  // namespace kmini
