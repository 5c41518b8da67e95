#include "io/npy.hpp"

#include "core/collective.hpp"
#include "core/checked_size.hpp"
#include "core/errors.hpp"
#include "core/text.hpp"
#include "io/atomic_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace kmini::npy {

namespace {

struct DTypeEntry {
  DType dtype;
  const char* name;
  const char* descr;
  std::size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::Bool, "bool", "|b1", 1}, {DType::U1, "u1", "|u1", 1},   {DType::I4, "i4", "<i4", 4},
    {DType::I8, "i8", "<i8", 8},     {DType::F4, "f4", "<f4", 4},   {DType::F8, "f8", "<f8", 8},
    {DType::C8, "c8", "<c8", 8},     {DType::C16, "c16", "<c16", 16},
};
const DTypeEntry& entry(DType d) {
  for (const auto& e : kDTypes)
    if (e.dtype == d) return e;
  return kDTypes[0];
}

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw UsageError(path + ": " + what);
}

// Parser for the header dict numpy writes, e.g.
// {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
 public:
  HeaderParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

  void parse(std::string& descr, bool& fortran, Shape& shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip_ws();
      if (peek() == '}') break;
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_order = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail("unexpected key " + quoted_value(key) + " in the header (expected descr, fortran_order, shape)");
      }
      skip_ws();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skip_ws();
      if (peek() != '}') fail("malformed header dict");
    }
    ++pos_;
    skip_ws();
    if (pos_ != s_.size()) fail("malformed header: text after the dict");
    if (!have_descr || !have_order || !have_shape)
      fail("header lacks one of 'descr', 'fortran_order', 'shape'");
  }

 private:
  [[noreturn]] void fail(const std::string& what) { bad(path_, what); }
  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t')) ++pos_;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void expect(char c) {
    skip_ws();
    if (peek() != c) fail(std::string("malformed header: expected '") + c + "'");
    ++pos_;
  }
  std::string quoted() {
    skip_ws();
    const char q = peek();
    if (q != '\'' && q != '"') fail("malformed header: expected a quoted string");
    const std::size_t end = s_.find(q, pos_ + 1);
    if (end == std::string::npos) fail("malformed header: unterminated string");
    std::string out = s_.substr(pos_ + 1, end - pos_ - 1);
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_ws();
    if (s_.compare(pos_, 4, "True") == 0) {
      pos_ += 4;
      return true;
    }
    if (s_.compare(pos_, 5, "False") == 0) {
      pos_ += 5;
      return false;
    }
    fail("malformed header: fortran_order must be True or False");
  }
  Shape tuple() {
    Shape out;
    expect('(');
    while (true) {
      skip_ws();
      if (peek() == ')') break;
      std::size_t digits = 0;
      std::int64_t v = 0;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("shape dimension too large");
        v = v * 10 + (s_[pos_++] - '0');
        ++digits;
      }
      if (!digits) fail("malformed header: shape must be a tuple of non-negative integers");
      out.push_back(v);
      skip_ws();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("malformed header: shape must be a tuple of integers");
    }
    ++pos_;
    return out;
  }

  const std::string& path_;
  const std::string& s_;
  std::size_t pos_ = 0;
};

std::uint64_t file_size(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) bad(path, std::string("cannot open (") + std::strerror(errno) + ")");
  return static_cast<std::uint64_t>(st.st_size);
}

}  // namespace

std::size_t item_size(DType d) { return entry(d).size; }
const char* short_name(DType d) { return entry(d).name; }
const char* descr(DType d) { return entry(d).descr; }

std::string shape_string(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(s[i]);
  }
  if (s.size() == 1) out += ",";
  return out + ")";
}

std::uint64_t Info::element_count() const {
  // Checked: an Info may come from anywhere (read_info also checks the byte count).
  const auto n = checked_product(shape);
  if (!n) throw_size_overflow(path + ": shape " + shape_string(shape));
  return *n;
}

Info read_info(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) bad(path, std::string("cannot open (") + std::strerror(errno) + ")");
  char pre[10] = {};
  in.read(pre, 8);
  if (in.gcount() < 8 || std::memcmp(pre, kMagic, kMagicLen) != 0)
    bad(path, "not a .npy file (bad magic; expected \\x93NUMPY)");
  const int major = static_cast<unsigned char>(pre[6]);
  const int minor = static_cast<unsigned char>(pre[7]);
  std::uint64_t header_len = 0, prefix = 0;
  if (major == 1 && minor == 0) {
    unsigned char b[2];
    in.read(reinterpret_cast<char*>(b), 2);
    if (in.gcount() < 2) bad(path, "truncated header");
    header_len = b[0] | (b[1] << 8);
    prefix = 10;
  } else if (major == 2 && minor == 0) {
    unsigned char b[4];
    in.read(reinterpret_cast<char*>(b), 4);
    if (in.gcount() < 4) bad(path, "truncated header");
    header_len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<std::uint64_t>(b[3]) << 24);
    prefix = 12;
  } else {
    bad(path, ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " is not supported (expected 1.0 or 2.0)");
  }
  const std::uint64_t size = file_size(path);
  if (prefix + header_len > size) bad(path, "truncated header");
  std::string text(header_len, '\0');
  in.read(text.data(), static_cast<std::streamsize>(header_len));

  std::string descr_text;
  bool fortran = false;
  Info info;
  info.path = path;
  HeaderParser(path, text).parse(descr_text, fortran, info.shape);
  if (fortran) bad(path, "Fortran-ordered arrays are not supported (expected C order; use np.ascontiguousarray)");
  if (!descr_text.empty() && descr_text[0] == '>')
    bad(path, "big-endian dtype " + quoted_value(descr_text) + " is not supported (expected little-endian)");
  bool known = false;
  for (const auto& e : kDTypes) {
    const std::string alt = std::string("<") + (e.descr + 1);  // '<u1' is as good as '|u1'
    if (descr_text == e.descr || (e.size == 1 && descr_text == alt)) {
      info.dtype = e.dtype;
      known = true;
    }
  }
  if (!known)
    bad(path, "unsupported dtype " + quoted_value(descr_text) + " (expected one of bool, u1, i4, i8, f4, f8, c8, c16)");
  info.data_offset = prefix + header_len;
  // Shape x item size must be a valid byte count before it is compared with the file.
  const auto elements = checked_product(info.shape);
  const auto want_bytes = elements ? checked_mul(*elements, item_size(info.dtype)) : std::nullopt;
  if (!want_bytes) throw_size_overflow(path + ": shape " + shape_string(info.shape) + " of " + short_name(info.dtype));
  const std::uint64_t want = *want_bytes;
  const std::uint64_t have = size - info.data_offset;
  if (have < want)
    bad(path, "truncated data: shape " + shape_string(info.shape) + " of " + short_name(info.dtype) + " needs " +
                  std::to_string(want) + " bytes, the file holds " + std::to_string(have));
  if (have > want)
    bad(path, "unexpected " + std::to_string(have - want) + " bytes after the data of shape " +
                  shape_string(info.shape));
  return info;
}

void require_dtype(const Info& info, std::initializer_list<DType> allowed) {
  std::string names;
  for (DType d : allowed) {
    if (d == info.dtype) return;
    names += (names.empty() ? "" : " or ") + std::string(short_name(d));
  }
  bad(info.path, std::string("dtype ") + short_name(info.dtype) + " (expected " + names + ")");
}

void require_shape(const Info& info, const Shape& expected) {
  if (info.shape != expected)
    bad(info.path, "shape " + shape_string(info.shape) + " (expected " + shape_string(expected) + ")");
}

void read_elements(const Info& info, std::uint64_t first, std::uint64_t count, void* dst) {
  const std::size_t isz = item_size(info.dtype);
  const auto end = checked_add(first, count);
  const auto start = checked_mul(first, isz), bytes = checked_mul(count, isz);
  const auto offset = start ? checked_add(info.data_offset, *start) : std::nullopt;
  if (!end || *end > info.element_count() || !bytes || !offset) bad(info.path, "read past the end of the array");
  std::ifstream in(info.path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(*offset));
  in.read(static_cast<char*>(dst), static_cast<std::streamsize>(*bytes));
  if (static_cast<std::uint64_t>(in.gcount()) != *bytes) bad(info.path, "read failed (file changed?)");
}

std::size_t ElementType::size() const {
  std::size_t bytes = 0;
  for (const auto& f : fields_) bytes += item_size(f.dtype);
  return bytes;
}

std::string ElementType::descr_repr() const {
  if (!structured_) return std::string("'") + descr(fields_[0].dtype) + "'";
  std::string out = "[";
  for (std::size_t i = 0; i < fields_.size(); ++i)
    out += (i ? ", ('" : "('") + fields_[i].name + "', '" + descr(fields_[i].dtype) + "')";
  return out + "]";
}

std::string make_header(const ElementType& element, const Shape& shape) {
  std::string dict = "{'descr': " + element.descr_repr() + ", 'fortran_order': False, 'shape': " +
                     shape_string(shape) + ", }";
  // numpy's spare room for the first dimension to grow to 21 digits.
  constexpr std::size_t kGrowthAxisMaxDigits = 21;
  if (!shape.empty()) {
    const std::size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits) dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  // Spaces and a newline so the data starts on a 64-byte boundary; numpy adds
  // 64 (not 0) when the text is already aligned. Version 2.0 when the length
  // does not fit version 1.0's 2 bytes.
  std::size_t prefix = 10;
  std::size_t padded = dict.size() + 1 + (64 - (prefix + dict.size() + 1) % 64);
  if (padded > 65535) {
    prefix = 12;
    padded = dict.size() + 1 + (64 - (prefix + dict.size() + 1) % 64);
  }
  dict.append(padded - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic, kMagicLen);
  const std::uint64_t len = dict.size();
  if (prefix == 10) {
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(len & 0xff);
    out += static_cast<char>((len >> 8) & 0xff);
  } else {
    out += '\x02';
    out += '\x00';
    for (int b = 0; b < 4; ++b) out += static_cast<char>((len >> (8 * b)) & 0xff);
  }
  return out + dict;
}

void write(const std::string& path, const ElementType& element, const Shape& shape, const void* data) {
  std::uint64_t n = 1;
  for (auto d : shape) n *= static_cast<std::uint64_t>(d);
  AtomicFile f(path);
  f.write(make_header(element, shape));
  f.write(data, n * element.size());
  f.commit();
}

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

}  // namespace

DistributedWriter::DistributedWriter(MPI_Comm comm, std::string path, const ElementType& element, Shape global_shape)
    : comm_(comm), path_(std::move(path)), element_(element), shape_(std::move(global_shape)) {
  std::uint64_t elements = 1;
  for (auto d : shape_) elements *= static_cast<std::uint64_t>(d);
  open(make_header(element_, shape_).size() + elements * element_.size());
}

DistributedWriter::DistributedWriter(MPI_Comm comm, std::string path, const ElementType& element, GrowingLength)
    : comm_(comm), path_(std::move(path)), element_(element), shape_{0}, growing_(true) {
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
  const std::string header = make_header(element_, shape_);
  header_bytes_ = header.size();

  // Every rank registers the name (any of them may be the one SIGTERM reaches first).
  collectively(comm_, [&] {
    registration_ = termination::TemporaryFile(temp_);
    if (rank != 0) return;
    try {
      reserve_space(temp_, total);
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
    pieces = static_cast<std::int64_t>((std::uint64_t(block->nrows) * block->ncols * isz + kPieceBytes - 1) / kPieceBytes);
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

template <class Piece>
void DistributedWriter::write_pieces(std::int64_t pieces, Piece&& piece) {
  // Every rank takes part in as many collective writes as the busiest one.
  std::int64_t rounds = pieces;
  MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT64_T, MPI_MAX, comm_);
  MPI_Datatype etype;
  MPI_Type_contiguous(static_cast<int>(element_.size()), MPI_BYTE, &etype);
  MPI_Type_commit(&etype);
  for (std::int64_t p = 0; p < rounds; ++p) {
    MPI_Offset disp = static_cast<MPI_Offset>(header_bytes_);
    MPI_Datatype ftype = etype;
    int count = 0;
    const char* data = nullptr;
    if (p < pieces) piece(p, etype, disp, ftype, count, data);
    MPI_Status st;
    check(MPI_File_set_view(fh_, disp, etype, ftype, "native", MPI_INFO_NULL), nullptr, -1, "MPI_File_set_view");
    check(MPI_File_write_all(fh_, data, count, etype, &st), &st,
          static_cast<long long>(count) * static_cast<long long>(element_.size()), "MPI_File_write_all");
    if (ftype != etype) MPI_Type_free(&ftype);
  }
  MPI_Type_free(&etype);
}

void DistributedWriter::commit(std::int64_t length) {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  if (!growing_ && (shape_.size() != 1 || shape_[0] != length))
    error_ = "commit(" + std::to_string(length) + ") of an array of shape " + shape_string(shape_);
  shape_ = {length};
  const std::string header = make_header(element_, shape_);
  if (error_.empty() && header.size() != header_bytes_)  // 10^21 elements: not a file anyone writes
    error_ = "a header of " + std::to_string(header.size()) + " bytes where " + std::to_string(header_bytes_) +
             " were left for it";
  // Writes after the header have moved the view: back to plain bytes (collective).
  if (open_) check(MPI_File_set_view(fh_, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), nullptr, -1,
                   "MPI_File_set_view");
  if (open_ && error_.empty() && rank == 0) {
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
