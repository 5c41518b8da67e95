#include "io/input_file.hpp"

#include "core/errors.hpp"
#include "core/file_kind.hpp"
#include "core/format.hpp"
#include "core/text.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace kmini::io {
namespace {

// Paths cut in the middle like any echoed text: a 4096-character path still gives a short line.
[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw UsageError(escape_cut(path, 2 * kShownChars) + ": " + what);
}

std::string os_error(int err) { return std::strerror(err); }

void require_kind(const std::string& path, mode_t mode, const std::string& what) {
  const std::string kind = file_kind(mode);
  if (!kind.empty())
    fail(path, (kind.rfind("not ", 0) == 0 ? kind : "is " + kind) + ", expected " + what + " (a regular file)");
}

}  // namespace

void refuse_compressed(const std::string& path, const void* head, std::size_t n, const std::string& what) {
  struct Magic {
    const char* bytes;
    std::size_t size;
    const char* format;
    const char* tool;
  };
  static const Magic kMagics[] = {{"\x1f\x8b", 2, "gzip", "gunzip"},
                                  {"BZh", 3, "bzip2", "bunzip2"},
                                  {"\xfd"
                                   "7zXZ",
                                   6, "xz", "unxz"},
                                  {"\x28\xb5\x2f\xfd", 4, "zstd", "unzstd"}};
  for (const Magic& m : kMagics)
    if (n >= m.size && std::memcmp(head, m.bytes, m.size) == 0)
      fail(path, std::string("is ") + m.format + "-compressed, expected " + what +
                     " (kmini reads its inputs uncompressed: decompress it first, e.g. " + m.tool + ")");
}

void require_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) fail(path, "cannot open " + what + " (" + os_error(errno) + ")");
  require_kind(path, st.st_mode, what);
}

InputFile::InputFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  require_regular_file(path, what);
  do fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  while (fd_ < 0 && errno == EINTR);
  if (fd_ < 0) fail(path, "cannot open " + what + " (" + os_error(errno) + ")");
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    ::close(fd_);
    fail(path, "cannot open " + what + " (" + os_error(err) + ")");
  }
  if (!S_ISREG(st.st_mode)) {  // replaced between the check and the open
    ::close(fd_);
    require_kind(path, st.st_mode, what);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t InputFile::read_up_to(std::uint64_t offset, void* dst, std::uint64_t bytes) const {
  auto* p = static_cast<char*>(dst);
  std::uint64_t done = 0;
  while (done < bytes) {
    // At most 1 GiB per call: Linux transfers at most 0x7ffff000 bytes per read().
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(bytes - done, std::uint64_t(1) << 30));
    const ssize_t got = ::pread(fd_, p + done, want, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(path_, "read error at byte " + std::to_string(offset + done) + " (" + os_error(errno) + ")");
    if (got == 0) break;
    done += static_cast<std::uint64_t>(got);
  }
  return done;
}

void InputFile::read_exactly(std::uint64_t offset, void* dst, std::uint64_t bytes) const {
  const std::uint64_t done = read_up_to(offset, dst, bytes);
  if (done < bytes)
    fail(path_, "ends at byte " + std::to_string(offset + done) + ", expected " + std::to_string(offset + bytes) +
                    " bytes (the file is shorter than it was, or changed while being read)");
}

std::string InputFile::read_all(std::uint64_t limit) const {
  if (size_ > limit)
    fail(path_, "is " + format_bytes(double(size_)) + ", larger than " + format_bytes(double(limit)) + ", the most " +
                    what_ + " may hold");
  // Read to end of file, not to st_size: files in /proc report size 0.
  std::string text;
  char buf[65536];
  for (std::uint64_t got; (got = read_up_to(text.size(), buf, sizeof buf)) > 0;) {
    if (text.size() + got > limit)
      fail(path_, "holds more than " + format_bytes(double(limit)) + ", the most " + what_ + " may hold");
    text.append(buf, static_cast<std::size_t>(got));
  }
  return text;
}

}  // namespace kmini::io
