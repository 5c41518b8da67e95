#pragma once
// Output files appear whole or not at all: data goes to a temporary file in
// the same directory, which is renamed over the target only after it was
// written, flushed and synced. Until then the previous file of that name is
// untouched; a failure, an exception or SIGTERM removes the temporary file.
#include "core/termination.hpp"

#include <cstddef>
#include <cstdio>
#include <string>

namespace kmini {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary file unless committed
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, std::size_t bytes);
  void write(const std::string& text) { write(text.data(), text.size()); }
  void commit();
  const std::string& temp_path() const { return temp_; }

 private:
  std::string path_;
  std::string temp_;
  termination::TemporaryFile registration_;
  std::FILE* file_ = nullptr;
  std::size_t written_ = 0;
  bool committed_ = false;
};

// The marker in every temporary output name: `find DIR -name '*.kmini-tmp.*'`
// lists what a SIGKILLed run left behind.
inline constexpr const char* kTemporaryMarker = ".kmini-tmp.";

// A temporary name next to `path`, unique to this process:
// `<file name cut to 48 characters>.kmini-tmp.<pid>.<n>`. Its length is
// bounded whatever the output name: OpenMPI 4.1's shared-file-pointer
// component aborts (buffer overflow) on file names over about 210 characters.
std::string temporary_name_for(const std::string& path);

// The file an output path names: the path itself or, where a symbolic link
// is at that path, the file the link points to (followed to the end; it need
// not exist yet): outputs are written through links, as numpy and the shell
// write, and the link stays. A loop of links is a RuntimeFailure.
std::string output_target(const std::string& path);

// Makes a rename in the directory of `path` durable (fsync of the directory);
// best effort: some file systems do not sync directories.
void sync_directory_of(const std::string& path);

// "No space left on device" for errno values; used by every writer's messages.
std::string os_error_text(int err);

// Writes text to path atomically.
void write_text_file_atomically(const std::string& path, const std::string& text);

}  // namespace kmini
