#pragma once
// SIGTERM / SIGINT / SIGHUP (what Slurm and mpirun send at walltime or on
// cancel): remove every temporary output file in flight, print one line on
// rank 0 and exit with 128 + signal. Previous outputs are never touched: they
// are replaced only by rename() of a finished temporary file.
//
// Temporary files are registered in a fixed table the handler can walk with
// async-signal-safe calls only (unlink, write, _exit). The signals are
// blocked in every thread but the main one (see Environment), so the handler
// runs on the thread that creates and renames the files and cannot race it.
#include <csignal>
#include <string>

namespace kmini::termination {

// Installs the handlers; `print_rank` decides whether this process prints the
// one-line message. Also ignores SIGXFSZ, so writing past a file-size limit
// (ulimit -f) is a write error (EFBIG) kmini reports, not a kill.
void install_handlers(bool print_rank);

// The run's exit status is decided and, on failure, already reported: a
// signal arriving after this (mpiexec tears the job down as soon as one rank
// exits non-zero) still removes temporaries but exits silently with `status`,
// so the user sees one message, not a second one about the teardown.
void status_decided(int status);

// Blocks (true) or unblocks (false) the handled signals in the calling thread;
// threads created while blocked inherit the mask.
void block_signals(bool block);

// Registers a temporary path (removed by the handler) for the lifetime of
// the object. Registration failures (table full, path too long) throw.
// mpi_io_rank (this process's rank in the communicator that opens the file
// with MPI-IO, where one does): the handler also removes the file Open MPI's
// shared-file-pointer component creates beside it while MPI_File_open runs
// (PATH.locktest.RANK, removed by Open MPI when the open completes).
class TemporaryFile {
 public:
  TemporaryFile() = default;
  explicit TemporaryFile(const std::string& path, int mpi_io_rank = -1);
  ~TemporaryFile() { release(); }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  TemporaryFile(TemporaryFile&& other) noexcept : slot_(other.slot_) { other.slot_ = -1; }
  TemporaryFile& operator=(TemporaryFile&& other) noexcept;
  // Forget the path (after it was renamed into place or removed).
  void release();

 private:
  int slot_ = -1;
};

// For tests: how many temporary files are registered now.
int registered_count();

}  // namespace kmini::termination
