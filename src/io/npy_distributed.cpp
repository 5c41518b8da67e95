// The distributed .npy writer: every rank writes its blocks of one file with
// MPI-IO, under a temporary name that rank 0 renames once all have written;
// any rank's I/O error is every rank's error and leaves no file behind.
#include "core/checked_size.hpp"
#include "core/collective.hpp"
#include "core/errors.hpp"
#include "core/mpi_type.hpp"
#include "core/text.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace kmini::npy {

void write_distributed(MPI_Comm comm, const std::string& path, DType dtype, const Shape& global_shape,
                       std::uint64_t first, std::uint64_t count, const void* data) {
  DistributedWriter writer(comm, path, dtype, global_shape);
  writer.write_elements_round(first, count, data);
  writer.commit();
}

std::string mpi_error_text(int rc) {
  int cls = 0;
  MPI_Error_class(rc, &cls);
  struct Known {
    int cls;
    const char* os_text;
    const char* name;
  };
  static const Known kKnown[] = {
      {MPI_ERR_NO_SPACE, "No space left on device", "MPI_ERR_NO_SPACE"},
      {MPI_ERR_QUOTA, "Disk quota exceeded", "MPI_ERR_QUOTA"},
      {MPI_ERR_ACCESS, "Permission denied", "MPI_ERR_ACCESS"},
      {MPI_ERR_NO_SUCH_FILE, "No such file or directory", "MPI_ERR_NO_SUCH_FILE"},
      {MPI_ERR_READ_ONLY, "Read-only file system", "MPI_ERR_READ_ONLY"},
      {MPI_ERR_IO, "Input/output error", "MPI_ERR_IO"},
  };
  for (const auto& k : kKnown)
    if (k.cls == cls) return std::string(k.os_text) + " (" + k.name + ")";
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, static_cast<std::size_t>(len));
}

namespace {

// Reserves the file's final size so that a full disk or quota fails here,
// with the OS's own error, before any data is written (and before OpenMPI
// prints its own messages about failed writes). File systems without
// fallocate (EOPNOTSUPP) skip the reservation; the checks below still hold.
void reserve_space(const std::string& temp, std::uint64_t bytes) {
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw RuntimeFailure("cannot create the temporary output file (" + os_error_text(errno) + ")");
  int err = 0;
#ifdef __linux__
  if (bytes > 0 && ::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) != 0 && errno != EOPNOTSUPP && errno != ENOSYS)
    err = errno;
#else
  (void)bytes;
#endif
  if (::close(fd) != 0 && !err) err = errno;
  if (err)
    throw RuntimeFailure("cannot reserve " + std::to_string(bytes) + " bytes for the output (" + os_error_text(err) +
                         ")");
}

// Reserves [offset, offset + bytes) of the temporary file before a write of a
// growing array, whose size open() could not reserve: a full disk or a file-size
// limit is then this rank's error with its reason, before MPI-IO writes anything
// (it would report a short count without one). Empty on success.
std::string reserve_range(const std::string& temp, std::uint64_t offset, std::uint64_t bytes) {
#ifdef __linux__
  const int fd = ::open(temp.c_str(), O_WRONLY);
  if (fd < 0) return os_error_text(errno);
  int err = 0;
  if (::fallocate(fd, 0, static_cast<off_t>(offset), static_cast<off_t>(bytes)) != 0 && errno != EOPNOTSUPP &&
      errno != ENOSYS)
    err = errno;
  ::close(fd);
  return err ? os_error_text(err) : std::string();
#else
  (void)temp, (void)offset, (void)bytes;
  return {};
#endif
}

}  // namespace

DistributedWriter::DistributedWriter(MPI_Comm comm, std::string path, const ElementType& element, Shape global_shape)
    : comm_(comm), path_(output_target(path)), element_(element), shape_(std::move(global_shape)) {
  std::uint64_t elements = 1;
  for (auto d : shape_) elements *= static_cast<std::uint64_t>(d);
  open(make_header(element_, shape_).size() + elements * element_.size());
}

DistributedWriter::DistributedWriter(MPI_Comm comm, std::string path, const ElementType& element, GrowingLength)
    : comm_(comm), path_(output_target(path)), element_(element), shape_{0}, growing_(true) {
  open(0);
}

DistributedWriter::DistributedWriter(MPI_Comm comm, std::string path, RawBytes)
    : comm_(comm), path_(output_target(path)), element_(DType::U1), shape_{0}, growing_(true), raw_(true) {
  open(0);
}

void DistributedWriter::open(std::uint64_t total) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  temp_ = rank == 0 ? temporary_name_for(path_) : std::string();
  int len = static_cast<int>(temp_.size());
  MPI_Bcast(&len, 1, MPI_INT, 0, comm_);
  temp_.resize(static_cast<std::size_t>(len));
  MPI_Bcast(temp_.data(), len, MPI_CHAR, 0, comm_);
  // A growing array's header is written by commit(length); its length does
  // not depend on the length (see make_header).
  const std::string header = raw_ ? std::string() : make_header(element_, shape_);
  header_bytes_ = header.size();

  // Every rank registers the name (any of them may be the one SIGTERM reaches first).
  collectively(comm_, [&] {
    registration_ = termination::TemporaryFile(temp_, rank);  // MPI-IO opens it below
    if (rank != 0) return;
    try {
      reserve_space(temp_, growing_ ? header_bytes_ : total);  // a growing array: its header, then each write
    } catch (const std::exception& e) {
      std::remove(temp_.c_str());
      throw RuntimeFailure(path_ + ": " + e.what() + "; the previous file is unchanged");
    }
  });
  const int rc = MPI_File_open(comm_, temp_.c_str(), MPI_MODE_WRONLY, MPI_INFO_NULL, &fh_);
  open_ = rc == MPI_SUCCESS;
  if (!open_) error_ = "cannot open the temporary output file with MPI-IO (" + mpi_error_text(rc) + ")";
  if (open_) MPI_File_set_errhandler(fh_, MPI_ERRORS_RETURN);
  if (open_ && rank == 0 && !growing_) {
    MPI_Status st;
    check(MPI_File_write_at(fh_, 0, header.data(), static_cast<int>(header.size()), MPI_BYTE, &st), &st,
          static_cast<long long>(header.size()), "header write");
  }
  fail_collectively_if_any();
}

DistributedWriter::~DistributedWriter() {
  if (open_) MPI_File_close(&fh_);
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank == 0 && !temp_.empty()) std::remove(temp_.c_str());
}

void DistributedWriter::check(int rc, const MPI_Status* st, long long expected_bytes, const char* what) {
  if (!error_.empty()) return;
  if (rc != MPI_SUCCESS) {
    error_ = std::string(what) + " failed (" + mpi_error_text(rc) + ")";
    return;
  }
  if (st && expected_bytes >= 0) {
    int got = 0;
    MPI_Get_count(st, MPI_BYTE, &got);
    if (got != MPI_UNDEFINED && got != expected_bytes)
      error_ = std::string(what) + " wrote " + std::to_string(got) + " of " + std::to_string(expected_bytes) + " bytes";
  }
}

void DistributedWriter::fail_collectively_if_any() {
  int status = error_.empty() ? kExitSuccess : kExitFailure;
  std::string message = error_;
  status = agree_on_status(comm_, status, message);
  if (status == kExitSuccess) return;
  if (open_) {
    MPI_File_close(&fh_);
    open_ = false;
  }
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (rank == 0) std::remove(temp_.c_str());
  temp_.clear();
  registration_.release();
  throw RuntimeFailure(path_ + ": " + message + "; the previous file is unchanged");
}

void DistributedWriter::write_round(const Block* block) {
  if (shape_.size() != 2) {  // 1-D arrays: a block is an element range
    const bool some = block && block->nrows > 0 && block->ncols > 0;
    write_elements_round(some ? block->col0 : 0, some ? block->ncols : 0, some ? block->data : nullptr);
    return;
  }
  const std::uint64_t isz = element_.size();
  const std::int64_t row_length = shape_[1];
  // Pieces of whole rows, at most 2^30 bytes each (MPI counts are int).
  std::int64_t pieces = 0;
  if (block && block->nrows > 0 && block->ncols > 0)
    pieces =
        static_cast<std::int64_t>((std::uint64_t(block->nrows) * block->ncols * isz + kPieceBytes - 1) / kPieceBytes);
  write_pieces(pieces, [&](std::int64_t p, MPI_Datatype etype, MPI_Offset& disp, MPI_Datatype& ftype, int& count,
                           const char*& data) {
    const std::int64_t per = block->nrows / pieces + (p < block->nrows % pieces ? 1 : 0);
    const std::int64_t first = p * (block->nrows / pieces) + std::min<std::int64_t>(p, block->nrows % pieces);
    MPI_Type_vector(static_cast<int>(per), static_cast<int>(block->ncols), static_cast<int>(row_length), etype, &ftype);
    MPI_Type_commit(&ftype);
    disp += static_cast<MPI_Offset>(((block->row0 + first) * row_length + block->col0) * isz);
    count = static_cast<int>(per * block->ncols);
    data = static_cast<const char*>(block->data) + first * block->ncols * isz;
  });
}

void DistributedWriter::write_elements_round(std::uint64_t first, std::uint64_t count, const void* data) {
  const std::uint64_t isz = element_.size();
  const std::uint64_t per = kPieceBytes / isz;  // elements per piece
  const auto pieces = static_cast<std::int64_t>((count + per - 1) / per);
  write_pieces(pieces, [&](std::int64_t p, MPI_Datatype, MPI_Offset& disp, MPI_Datatype&, int& n, const char*& bytes) {
    const std::uint64_t start = std::uint64_t(p) * per;
    disp += static_cast<MPI_Offset>((first + start) * isz);
    n = static_cast<int>(std::min(per, count - start));
    bytes = static_cast<const char*>(data) + start * isz;
  });
}

void DistributedWriter::write_elements_independent(std::uint64_t first, std::uint64_t count, const void* data) {
  const std::uint64_t isz = element_.size();
  const std::uint64_t per = kPieceBytes / isz;  // elements per write (MPI counts are int)
  // Earlier collective writes may have set a view: back to plain bytes (collective).
  if (open_)
    check(MPI_File_set_view(fh_, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), nullptr, -1, "MPI_File_set_view");
  for (std::uint64_t start = 0; open_ && error_.empty() && start < count; start += per) {
    const std::uint64_t n = std::min(per, count - start);
    MPI_Status st;
    check(MPI_File_write_at(fh_, static_cast<MPI_Offset>(header_bytes_ + (first + start) * isz),
                            static_cast<const char*>(data) + start * isz, static_cast<int>(n * isz), MPI_BYTE, &st),
          &st, static_cast<long long>(n * isz), "MPI_File_write_at");
  }
}

template <class Piece>
void DistributedWriter::write_pieces(std::int64_t pieces, Piece&& piece) {
  // Every rank takes part in as many collective writes as the busiest one.
  std::int64_t rounds = pieces;
  MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, comm_);
  const mpi::ContiguousType element(static_cast<std::int64_t>(element_.size()), MPI_BYTE);
  const MPI_Datatype etype = element.get();
  for (std::int64_t p = 0; p < rounds; ++p) {
    MPI_Offset disp = static_cast<MPI_Offset>(header_bytes_);
    MPI_Datatype ftype = etype;
    int count = 0;
    const char* data = nullptr;
    if (p < pieces) piece(p, etype, disp, ftype, count, data);
    if (growing_ && count > 0 && error_.empty()) {  // 1-D: the piece is count elements from disp
      const std::uint64_t bytes = static_cast<std::uint64_t>(count) * element_.size();
      const std::string why = reserve_range(temp_, static_cast<std::uint64_t>(disp), bytes);
      if (!why.empty()) {
        error_ = "cannot reserve " + std::to_string(bytes) + " more bytes for the output (" + why + ")";
        count = 0;  // still in the collective write, with nothing to write
      }
    }
    MPI_Status st;
    check(MPI_File_set_view(fh_, disp, etype, ftype, "native", MPI_INFO_NULL), nullptr, -1, "MPI_File_set_view");
    check(MPI_File_write_all(fh_, data, count, etype, &st), &st,
          static_cast<long long>(count) * static_cast<long long>(element_.size()), "MPI_File_write_all");
    if (ftype != etype) MPI_Type_free(&ftype);
  }
}

void DistributedWriter::commit(std::int64_t length) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (!growing_ && (shape_.size() != 1 || shape_[0] != length))
    error_ = "commit(" + std::to_string(length) + ") of an array of shape " + shape_string(shape_);
  shape_ = {length};
  const std::string header = raw_ ? std::string() : make_header(element_, shape_);
  if (error_.empty() && header.size() != header_bytes_)  // 10^21 elements: not a file anyone writes
    error_ = "a header of " + std::to_string(header.size()) + " bytes where " + std::to_string(header_bytes_) +
             " were left for it";
  // Writes after the header have moved the view: back to plain bytes (collective).
  if (open_)
    check(MPI_File_set_view(fh_, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), nullptr, -1, "MPI_File_set_view");
  if (open_ && error_.empty() && rank == 0 && !raw_) {
    MPI_Status st;
    check(MPI_File_write_at(fh_, 0, header.data(), static_cast<int>(header.size()), MPI_BYTE, &st), &st,
          static_cast<long long>(header.size()), "header write");
  }
  growing_ = false;
  commit();
}

void DistributedWriter::commit() {
  if (growing_) error_ = "commit() without the length of a growing array";
  // Data reaches the disk before the rename makes it the output.
  check(MPI_File_sync(fh_), nullptr, -1, "MPI_File_sync");
  const int rc = MPI_File_close(&fh_);
  open_ = false;
  check(rc, nullptr, -1, "MPI_File_close");
  fail_collectively_if_any();
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  collectively(comm_, [&] {
    if (rank != 0) return;
    std::uint64_t elements = 1;
    for (auto d : shape_) elements *= static_cast<std::uint64_t>(d);
    const std::uint64_t want = header_bytes_ + elements * element_.size();
    struct stat st;
    std::string problem;
    if (::stat(temp_.c_str(), &st) != 0) problem = "the temporary file vanished (" + os_error_text(errno) + ")";
    else if (static_cast<std::uint64_t>(st.st_size) != want)
      problem = "the written file has " + std::to_string(st.st_size) + " bytes, expected " + std::to_string(want);
    else if (std::rename(temp_.c_str(), path_.c_str()) != 0)
      problem = "could not rename the finished file into place (" + os_error_text(errno) + ")";
    if (!problem.empty()) {
      std::remove(temp_.c_str());
      throw RuntimeFailure(path_ + ": " + problem + "; the previous file is unchanged");
    }
    sync_directory_of(path_);
  });
  temp_.clear();
  registration_.release();
}

}  // namespace kmini::npy
