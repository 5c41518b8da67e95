// chemfp's FPS fingerprint files: the index pass (header, records' offsets
// and IDs, each line's form) and the decoding of records' hex digits.
#include "io/fps.hpp"

#include "core/errors.hpp"
#include "core/text.hpp"
#include "io/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_map>

namespace kmini::fps {

namespace {

// An FPS file's name, compressed ones included (read_index refuses those by content).
bool ends_with_fps(const std::string& path) {
  for (const char* tail : {".fps", ".fps.gz", ".fps.bz2", ".fps.xz", ".fps.zst"})
    if (ends_with(path, tail)) return true;
  return false;
}

[[noreturn]] void fail_at(const std::string& path, std::int64_t line, const std::string& what) {
  throw UsageError(path + ":" + std::to_string(line) + ": " + what);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A header line ('#' first): #num_bits= sets the width; #type= and
// #software= are kept; the version line and other keys are accepted as they are.
void read_header_line(Index& x, const std::string& line, std::int64_t number) {
  const auto eq = line.find('=');
  if (eq == std::string::npos) return;  // "#FPS1", or a comment
  const std::string key = line.substr(1, eq - 1);
  std::string value = line.substr(eq + 1);
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.erase(0, 1);
  if (key == "type") x.type = value;
  else if (key == "software") x.software = value;
  if (key != "num_bits") return;
  std::int64_t n = 0;
  bool ok = !value.empty() && value.size() <= 12;
  for (char c : value) {
    ok = ok && c >= '0' && c <= '9';
    n = n * 10 + (c - '0');
  }
  if (!ok || n < 1) fail_at(x.path, number, "#num_bits=" + value + ", expected a whole number of bits >= 1");
  x.num_bits = n;
}

// One record line (no newline): its hex field's width and its ID.
void read_record_line(Index& x, const std::string& line, std::int64_t number,
                      std::unordered_map<std::string, std::int64_t>& seen) {
  if (line.empty()) fail_at(x.path, number, "an empty line, expected a record <hex fingerprint><TAB><id>");
  const auto tab = line.find('\t');
  if (tab == std::string::npos)
    fail_at(x.path, number, "no tab after the fingerprint, expected <hex fingerprint><TAB><id>");
  const auto end = line.find('\t', tab + 1);
  std::string id = line.substr(tab + 1, end == std::string::npos ? std::string::npos : end - tab - 1);
  if (id.empty()) fail_at(x.path, number, "an empty ID, expected <hex fingerprint><TAB><id>");
  const auto digits = static_cast<std::int64_t>(tab);
  if (digits % 2 != 0)
    fail_at(x.path, number, std::to_string(digits) + " hex digits, expected an even number (two per byte)");
  if (x.num_bits == 0) {  // no #num_bits: the first record's width
    if (digits == 0) fail_at(x.path, number, "an empty fingerprint, expected hex digits");
    x.num_bits = 4 * digits;
  }
  x.hex_digits = 2 * x.bytes_per_row();
  if (digits != x.hex_digits)
    fail_at(x.path, number,
            std::to_string(digits) + " hex digits, expected " + std::to_string(x.hex_digits) +
                " (num_bits=" + std::to_string(x.num_bits) + ")");
  const auto [at, fresh] = seen.emplace(id, number);
  if (!fresh)
    fail_at(x.path, number,
            "ID '" + id + "' again (first on line " + std::to_string(at->second) + "), expected unique IDs");
  x.ids.push_back(std::move(id));
}

}  // namespace

bool is_fps(const std::string& path) {
  if (ends_with_fps(path)) return true;
  struct stat st {};
  // Only a regular file's first line is looked at: opening a FIFO would wait
  // for a writer (the .npy reader then refuses what is not a regular file).
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  std::ifstream in(path, std::ios::binary);
  char head[5] = {};
  in.read(head, 5);
  return in.gcount() == 5 && std::memcmp(head, "#FPS1", 5) == 0;
}

Index read_index(const std::string& path) {
  io::require_regular_file(path, "an FPS file");  // a FIFO or a device: refused before it is opened
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open for reading (" + std::strerror(errno) + ")");
  char head[6] = {};
  in.read(head, sizeof head);
  io::refuse_compressed(path, head, static_cast<std::size_t>(in.gcount()), "an FPS file");
  in.clear();
  in.seekg(0);
  Index x;
  x.path = path;
  std::unordered_map<std::string, std::int64_t> seen;
  std::string line;
  std::uint64_t at = 0;
  std::int64_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::uint64_t start = at;
    at += line.size() + (in.eof() ? 0 : 1);
    x.longest_line = std::max<std::int64_t>(x.longest_line, static_cast<std::int64_t>(at - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty() && line[0] == '#') {
      if (!x.ids.empty()) fail_at(path, number, "a header line after the first record, expected a record");
      read_header_line(x, line, number);
      continue;
    }
    if (x.ids.empty()) x.first_line = number;
    x.offsets.push_back(start);
    read_record_line(x, line, number, seen);
  }
  if (in.bad()) throw UsageError(path + ": read failed (" + std::strerror(errno) + ")");
  if (x.ids.empty()) throw UsageError(path + ": no fingerprint records, expected at least one line <hex><TAB><id>");
  x.offsets.push_back(at);
  return x;
}

std::string decode_hex(const char* hex, std::int64_t num_bits, std::uint8_t* out) {
  const std::int64_t nb = (num_bits + 7) / 8;
  for (std::int64_t b = 0; b < nb; ++b) {
    const int hi = hex_value(hex[2 * b]), lo = hex_value(hex[2 * b + 1]);
    if (hi < 0 || lo < 0) {
      const std::int64_t col = 2 * b + (hi < 0 ? 0 : 1);
      return "'" + std::string(1, hex[col]) + "' at column " + std::to_string(col + 1) + " is not a hex digit";
    }
    out[b] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  const int spare = static_cast<int>(nb * 8 - num_bits);
  if (spare > 0 && (out[nb - 1] >> (8 - spare)) != 0) {
    int bit = 7;
    while (!((out[nb - 1] >> bit) & 1)) --bit;
    return "bit " + std::to_string((nb - 1) * 8 + bit) + " is set, past num_bits=" + std::to_string(num_bits) +
           " (expected zeros)";
  }
  return "";
}

void decode_rows(const Index& index, const char* text, std::int64_t first, std::int64_t count, std::uint8_t* out) {
  const std::uint64_t base = index.offsets[static_cast<std::size_t>(first)];
  for (std::int64_t r = 0; r < count; ++r) {
    const char* line = text + (index.offsets[static_cast<std::size_t>(first + r)] - base);
    const std::string problem = decode_hex(line, index.num_bits, out + r * index.bytes_per_row());
    if (!problem.empty())
      fail_at(index.path, index.first_line + first + r,
              problem + " (record " + std::to_string(first + r) + ", ID '" +
                  index.ids[static_cast<std::size_t>(first + r)] + "')");
  }
}

void read_rows(const Index& index, std::int64_t first, std::int64_t count, std::uint8_t* out) {
  if (count <= 0) return;
  const std::uint64_t begin = index.offsets[static_cast<std::size_t>(first)];
  const std::uint64_t end = index.offsets[static_cast<std::size_t>(first + count)];
  std::string text(end - begin, '\0');
  std::ifstream in(index.path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(begin));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (!in || in.gcount() != static_cast<std::streamsize>(text.size()))
    throw RuntimeFailure(index.path + ": read of records " + std::to_string(first) + ".." +
                         std::to_string(first + count - 1) + " failed (the file changed since it was indexed?)");
  decode_rows(index, text.data(), first, count, out);
}

}  // namespace kmini::fps
