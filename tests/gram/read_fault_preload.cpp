// An LD_PRELOAD library for the read-fault tests: the reads of one file meet a
// fault at one byte of it, as a failing disk or another process would cause.
//
//   KMINI_READ_FAULT_FILE  the file (matched by device and inode, so any path to it)
//   KMINI_READ_FAULT_AT    the byte offset of the fault in the file
//   KMINI_READ_FAULT       eio:    a read that covers that byte fails with EIO
//                          shrink: the file is truncated to that byte just before
//                                  the first read that reaches it (another process
//                                  shortening the file while it is read)
//
// pread, preadv, read and readv are caught (with their 64-bit names), which
// covers both pread on one rank and MPI-IO's POSIX layer over several.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace {

struct Fault {
  bool active = false, eio = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t at = 0;
  const char* path = nullptr;
};

const Fault& fault() {
  static const Fault f = [] {
    Fault r;
    const char* path = std::getenv("KMINI_READ_FAULT_FILE");
    const char* at = std::getenv("KMINI_READ_FAULT_AT");
    const char* kind = std::getenv("KMINI_READ_FAULT");
    struct stat st {};
    if (!path || !at || !kind || ::stat(path, &st) != 0) return r;
    r.eio = std::strcmp(kind, "eio") == 0;
    r.active = r.eio || std::strcmp(kind, "shrink") == 0;
    r.dev = st.st_dev;
    r.ino = st.st_ino;
    r.at = static_cast<off_t>(std::strtoll(at, nullptr, 10));
    r.path = path;
    return r;
  }();
  return f;
}

// Whether a read of `bytes` at `offset` of fd meets the fault; for a shrink,
// the file is cut first and the read goes on (and comes back short).
bool fails(int fd, off_t offset, std::size_t bytes) {
  const Fault& f = fault();
  struct stat st {};
  if (!f.active || bytes == 0 || ::fstat(fd, &st) != 0 || st.st_dev != f.dev || st.st_ino != f.ino) return false;
  if (offset + static_cast<off_t>(bytes) <= f.at) return false;
  if (f.eio) return offset <= f.at;
  if (st.st_size > f.at && ::truncate(f.path, f.at) != 0) return false;
  return false;
}

std::size_t total(const struct iovec* iov, int n) {
  std::size_t s = 0;
  for (int i = 0; i < n; ++i) s += iov[i].iov_len;
  return s;
}

template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  static const auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread");
  if (fails(fd, off, n)) return errno = EIO, -1;
  return real(fd, buf, n, off);
}

ssize_t pread64(int fd, void* buf, size_t n, off_t off) {
  static const auto real = next<ssize_t (*)(int, void*, size_t, off_t)>("pread64");
  if (fails(fd, off, n)) return errno = EIO, -1;
  return real(fd, buf, n, off);
}

ssize_t preadv(int fd, const struct iovec* iov, int cnt, off_t off) {
  static const auto real = next<ssize_t (*)(int, const struct iovec*, int, off_t)>("preadv");
  if (fails(fd, off, total(iov, cnt))) return errno = EIO, -1;
  return real(fd, iov, cnt, off);
}

ssize_t preadv64(int fd, const struct iovec* iov, int cnt, off_t off) {
  static const auto real = next<ssize_t (*)(int, const struct iovec*, int, off_t)>("preadv64");
  if (fails(fd, off, total(iov, cnt))) return errno = EIO, -1;
  return real(fd, iov, cnt, off);
}

ssize_t read(int fd, void* buf, size_t n) {
  static const auto real = next<ssize_t (*)(int, void*, size_t)>("read");
  if (fault().active) {
    const off_t here = ::lseek(fd, 0, SEEK_CUR);
    if (here >= 0 && fails(fd, here, n)) return errno = EIO, -1;
  }
  return real(fd, buf, n);
}

ssize_t readv(int fd, const struct iovec* iov, int cnt) {
  static const auto real = next<ssize_t (*)(int, const struct iovec*, int)>("readv");
  if (fault().active) {
    const off_t here = ::lseek(fd, 0, SEEK_CUR);
    if (here >= 0 && fails(fd, here, total(iov, cnt))) return errno = EIO, -1;
  }
  return real(fd, iov, cnt);
}

}  // extern "C"
