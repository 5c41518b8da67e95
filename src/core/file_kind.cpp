#include "core/file_kind.hpp"

#include <sys/stat.h>

#include <cerrno>

namespace kmini {

std::string file_kind(mode_t mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string file_kind(const std::string& path, int& errno_out) {
  struct stat st {};
  errno_out = ::stat(path.c_str(), &st) == 0 ? 0 : errno;
  return errno_out ? "" : file_kind(st.st_mode);
}

}  // namespace kmini
