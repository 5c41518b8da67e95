#pragma once
// Output files appear whole or not at all: data goes to a temporary file in
// the same directory, which is renamed over the target only on commit().
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
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// A temporary name next to `path`, unique to this process.
std::string temporary_name_for(const std::string& path);

// Writes text to path atomically.
void write_text_file_atomically(const std::string& path, const std::string& text);

}  // namespace kmini
