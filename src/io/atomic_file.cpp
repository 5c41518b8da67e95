#include "io/atomic_file.hpp"

#include "core/errors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace kmini {

namespace {
constexpr std::size_t kKeptNameChars = 48;
}

std::string temporary_name_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return dir + name.substr(0, kKeptNameChars) + kTemporaryMarker + std::to_string(::getpid()) + "." +
         std::to_string(counter++);
}

void sync_directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string os_error_text(int err) { return std::strerror(err); }

std::string output_target(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  for (int links = 0; fs::is_symlink(p, ec); ++links) {
    if (links == 40) throw RuntimeFailure(path + ": too many levels of symbolic links (a loop?); nothing was written");
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) throw RuntimeFailure(path + ": cannot read the symbolic link (" + ec.message() + "); nothing was written");
    p = to.is_absolute() ? to : p.parent_path() / to;
  }
  return p == fs::path(path) ? path : p.lexically_normal().string();
}

AtomicFile::AtomicFile(std::string path) : path_(output_target(path)), temp_(temporary_name_for(path_)) {
  registration_ = termination::TemporaryFile(temp_);  // before the file exists: SIGTERM finds it
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_) throw RuntimeFailure(path_ + ": cannot create the temporary output file (" + os_error_text(errno) + ")");
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes)
    throw RuntimeFailure(path_ + ": write failed (" + os_error_text(errno) + "); the previous file is unchanged");
  written_ += bytes;
}

void AtomicFile::commit() {
  int err = 0;
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) err = errno;
  struct stat st;
  const bool sized = ::fstat(::fileno(file_), &st) == 0 && static_cast<std::size_t>(st.st_size) == written_;
  if (std::fclose(file_) != 0 && !err) err = errno;
  file_ = nullptr;
  if (err) throw RuntimeFailure(path_ + ": write failed (" + os_error_text(err) + "); the previous file is unchanged");
  if (!sized)
    throw RuntimeFailure(path_ +
                         ": write failed (the file holds fewer bytes than written); the previous file is unchanged");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw RuntimeFailure(path_ + ": could not rename the finished file into place (" + os_error_text(errno) +
                         "); the previous file is unchanged");
  committed_ = true;
  registration_.release();
  sync_directory_of(path_);
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace kmini
