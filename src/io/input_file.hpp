#pragma once
// Reading the files a run is given (decks, .npy inputs, checkpoints) the way
// a careful library does: regular files only, opened without
// blocking, every failed or short read() an error naming the file and the OS
// error. Each problem is a UsageError (exit 2) of one line.
//
// Why: `kmini /dev/zero` read the "deck" to the end (4.2 GB, then bad_alloc),
// a named pipe blocked forever in open(), and a deck whose read() failed with
// EIO (/proc/self/mem reproduces it) ran as an empty deck with exit 0.
#include <cstddef>
#include <cstdint>
#include <string>

namespace kmini::io {

// Throws UsageError "PATH: is a named pipe, expected <what>" unless `path` is a
// regular file (or "PATH: cannot open <what> (No such file or directory)").
void require_regular_file(const std::string& path, const std::string& what);

// Throws UsageError "PATH: is gzip-compressed, expected <what> (uncompressed: ...)"
// when the file's first bytes (`head`, `n` of them) are a gzip, bzip2, xz or
// zstd stream's magic: kmini reads its inputs uncompressed.
void refuse_compressed(const std::string& path, const void* head, std::size_t n, const std::string& what);

// An input file opened read-only: O_NONBLOCK (a FIFO swapped in after the
// check cannot block the open) and checked again on the descriptor.
class InputFile {
 public:
  InputFile(const std::string& path, const std::string& what);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  // Reads `bytes` at `offset`, fewer at end of file; returns how many. A
  // failed read() is a UsageError naming the file, the offset and the OS error.
  std::uint64_t read_up_to(std::uint64_t offset, void* dst, std::uint64_t bytes) const;
  // Reads exactly `bytes` at `offset`; anything less (EOF or an OS error) is
  // a UsageError naming the file, the offset and the reason.
  void read_exactly(std::uint64_t offset, void* dst, std::uint64_t bytes) const;
  // Reads up to `limit` bytes from offset 0 until end of file; a failed read
  // is an error, and a file longer than `limit` is one ("larger than 16 MiB").
  std::string read_all(std::uint64_t limit) const;

 private:
  std::string path_, what_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// The most a deck may hold: a deck is text, written by hand or a script.
inline constexpr std::uint64_t kMaxDeckBytes = std::uint64_t(16) << 20;

}  // namespace kmini::io
