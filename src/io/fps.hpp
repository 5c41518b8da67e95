#pragma once
// Fingerprint files in chemfp's FPS format: an optional header of lines that
// begin with '#' (the version line "#FPS1", then "#key=value" lines such as
// #num_bits=, #type=, #software=), then one record per line:
// <hex fingerprint> TAB <id> [TAB more fields, ignored], newlines LF or CRLF.
// The fingerprint is a byte string written byte by byte as two hex digits;
// bit i of the fingerprint is bit i % 8 (least significant first) of byte
// i / 8. Without #num_bits the width is 4 x the first record's hex digits.
//
// The index (read_index) is one pass over the file: the header, every
// record's place in the file and its ID, and each line's form (a tab, an ID,
// the hex width of num_bits); the hex digits themselves are decoded where the
// rows are read (decode_hex). IDs must be unique: a repeated ID is an error
// naming both lines (the outputs name rows by their IDs).
#include <cstdint>
#include <string>
#include <vector>

namespace kmini::fps {

struct Index {
  std::string path;
  std::int64_t num_bits = 0;
  std::int64_t hex_digits = 0;         // per fingerprint: 2 x ceil(num_bits / 8)
  std::int64_t first_line = 0;         // line number (from 1) of record 0; record r is on line first_line + r
  std::vector<std::uint64_t> offsets;  // rows + 1: the byte where each record's line starts; last: the data's end
  std::int64_t longest_line = 0;       // bytes, newline included
  std::vector<std::string> ids;        // one per record
  std::string type, software;          // #type= and #software= (empty when absent)
  std::int64_t rows() const { return static_cast<std::int64_t>(ids.size()); }
  std::int64_t bytes_per_row() const { return (num_bits + 7) / 8; }
};

// Whether `path` is an FPS file: its name ends in ".fps", or its first line is "#FPS1".
bool is_fps(const std::string& path);

// One pass over the file: the header and every record's offset and ID. A
// problem is a UsageError "<path>:<line>: <what>, expected <what>": a
// header line after a record, a bad #num_bits, a record without a tab or
// with an empty ID, hex of odd length or of a width other than num_bits',
// a repeated ID (both lines named), no records.
Index read_index(const std::string& path);

// Decodes one record's hex digits into ceil(num_bits / 8) bytes at `out`.
// Returns "" or what is wrong ("'g' at column 7 is not a hex digit", "bit 1027
// is set, past num_bits=1024"), for the caller to name the file and line.
std::string decode_hex(const char* hex, std::int64_t num_bits, std::uint8_t* out);

// Reads records [first, first + count) of `index` from its file into
// count x bytes_per_row() bytes at `out`, checking every digit and the bits
// past num_bits: a UsageError naming the file and line.
void read_rows(const Index& index, std::int64_t first, std::int64_t count, std::uint8_t* out);

// Decodes the records of `text`, the file's bytes from the start of record
// `first` (index.offsets[first]) to the end of record first + count - 1:
// count x bytes_per_row() bytes at `out`; a UsageError naming the file and line.
void decode_rows(const Index& index, const char* text, std::int64_t first, std::int64_t count, std::uint8_t* out);

}  // namespace kmini::fps
