#include "io/atomic_file.hpp"

#include "core/errors.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace kmini {

std::string temporary_name_for(const std::string& path) {
  static std::atomic<unsigned> counter{0};
  return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), temp_(temporary_name_for(path_)) {
  file_ = std::fopen(temp_.c_str(), "wb");
  if (!file_)
    throw UsageError(path_ + ": cannot create output file (" + std::strerror(errno) + ")");
}

AtomicFile::~AtomicFile() {
  if (file_) std::fclose(file_);
  if (!committed_) std::remove(temp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes && std::fwrite(data, 1, bytes, file_) != bytes)
    throw RuntimeFailure(path_ + ": write failed (" + std::strerror(errno) + ")");
}

void AtomicFile::commit() {
  const bool flushed = std::fflush(file_) == 0 && ::fsync(::fileno(file_)) == 0;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed)
    throw RuntimeFailure(path_ + ": could not finish writing (" + std::strerror(errno) + ")");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw RuntimeFailure(path_ + ": could not rename the finished file into place (" +
                         std::strerror(errno) + ")");
  committed_ = true;
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

}  // namespace kmini
