// gram's sparse outputs as tab-separated text with IDs (impl/gram_text.hpp).
#include "gram/impl/gram_text.hpp"

#include "core/format.hpp"
#include "core/mpi_type.hpp"
#include "core/solo.hpp"
#include "version.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace kmini::gram::detail {

namespace {

std::int64_t load_i8(const char* p) {
  std::int64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

void append_line(std::string& out, const std::string& query, const std::string* rank, const std::string& target,
                 const std::string& score) {
  out += query;
  out += '\t';
  if (rank) {
    out += *rank;
    out += '\t';
  }
  out += target;
  out += '\t';
  out += score;
  out += '\n';
}

const Source& targets_of(const Config& c) { return c.two_inputs() ? c.b : c.a; }

}  // namespace

std::string score_text(Similarity s, const char* value) {
  char text[32];
  std::to_chars_result r{};
  if (s == Similarity::Counts) {
    std::int32_t v = 0;
    std::memcpy(&v, value, 4);
    r = std::to_chars(text, text + sizeof text, v);
  } else {
    float v = 0;
    std::memcpy(&v, value, 4);
    r = std::to_chars(text, text + sizeof text, v, std::chars_format::fixed);  // 0.0005, not 5e-04
  }
  return std::string(text, r.ptr);
}

std::string top_k_lines(const Config& c, std::int64_t row0, std::int64_t rows, std::int64_t k, const char* records) {
  std::string out;
  const Source& t = targets_of(c);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::string query = c.a.row_id(row0 + i);
    for (std::int64_t r = 0; r < k; ++r) {
      const char* rec = records + (i * k + r) * 12;
      const std::int64_t j = load_i8(rec);
      if (j < 0) continue;  // fewer partners than k
      const std::string rank = std::to_string(r + 1);
      append_line(out, query, &rank, t.row_id(j), score_text(c.similarity, rec + 8));
    }
  }
  return out;
}

namespace {

// chemfp's name of the similarity in #type= (Tanimoto for jaccard), with Tversky's weights.
std::string simsearch_type(const Config& c) {
  std::string name = similarity_name(c.similarity);
  if (c.similarity == Similarity::Jaccard) name = "tanimoto";
  name[0] = static_cast<char>(name[0] - 'a' + 'A');
  const auto real = [](double v) {  // Python's str(float): 0.0, 0.7
    std::string s = format_g(v, 17);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  };
  std::string type = name + " k=" + std::to_string(c.top_k) + " threshold=" + real(c.top_k_min);
  if (c.similarity == Similarity::Tversky) type += " alpha=" + real(c.tversky_alpha) + " beta=" + real(c.tversky_beta);
  return type;
}

}  // namespace

std::string simsearch_header(const Config& c) {
  const Source& t = targets_of(c);
  const auto source = [](const Source& s) { return s.path.empty() ? std::string("random") : s.path; };
  return "#Simsearch/1\n#num_bits=" + std::to_string(c.a.cols) + "\n#type=" + simsearch_type(c) + "\n#software=kmini/" +
         std::string(kVersion) + "\n#queries=" + source(c.a) + "\n#targets=" + source(t) + "\n";
}

std::string simsearch_lines(const Config& c, std::int64_t row0, std::int64_t rows, std::int64_t k,
                            const char* records) {
  // chemfp's decimals: enough to tell 1/num_bits steps apart, and one more.
  const int decimals = static_cast<int>(std::log10(static_cast<double>(c.a.cols))) + 2;
  std::string out;
  const Source& t = targets_of(c);
  char score[64];
  for (std::int64_t i = 0; i < rows; ++i) {
    std::string hits;
    std::int64_t count = 0;
    for (std::int64_t r = 0; r < k; ++r) {
      const char* rec = records + (i * k + r) * 12;
      const std::int64_t j = load_i8(rec);
      if (j < 0) continue;  // fewer partners than k
      float v = 0;
      std::memcpy(&v, rec + 8, 4);
      std::snprintf(score, sizeof score, "%.*f", decimals, static_cast<double>(v));
      hits += '\t' + t.row_id(j) + '\t' + score;
      ++count;
    }
    out += std::to_string(count) + '\t' + c.a.row_id(row0 + i) + hits + '\n';
  }
  return out;
}

std::string pairs_lines(const Config& c, std::uint64_t n, const char* records) {
  std::string out;
  const Source& t = targets_of(c);
  for (std::uint64_t e = 0; e < n; ++e) {
    const char* rec = records + e * 20;
    append_line(out, c.a.row_id(load_i8(rec)), nullptr, t.row_id(load_i8(rec + 8)), score_text(c.similarity, rec + 16));
  }
  return out;
}

TextFile::TextFile(MPI_Comm comm, const std::string& path, const char* header)
    : comm_(comm), writer_(comm, path, npy::DistributedWriter::RawBytes{}) {
  append(mpi::rank(comm) == 0 ? 0 : -1, mpi::rank(comm) == 0 ? std::string(header) : std::string());
}

void TextFile::append(std::int64_t key, const std::string& text) {
  const int ranks = mpi::size(comm_);
  const std::int64_t mine[2] = {text.empty() ? -1 : key, static_cast<std::int64_t>(text.size())};
  std::vector<std::int64_t> all(mine, mine + 2);
  all.resize(static_cast<std::size_t>(2 * ranks));
  if (!mpi::solo(comm_)) MPI_Allgather(mine, 2, MPI_INT64_T, all.data(), 2, MPI_INT64_T, comm_);
  std::uint64_t at = written_;
  for (int q = 0; q < ranks; ++q) {
    const std::int64_t key_q = all[2 * static_cast<std::size_t>(q)];
    const auto bytes_q = static_cast<std::uint64_t>(all[2 * static_cast<std::size_t>(q) + 1]);
    if (key_q >= 0 && mine[0] >= 0 && (key_q < mine[0] || (key_q == mine[0] && q < mpi::rank(comm_)))) at += bytes_q;
    written_ += bytes_q;
  }
  writer_.write_elements_round(at, text.size(), text.data());
}

void TextFile::commit() { writer_.commit(static_cast<std::int64_t>(written_)); }

}  // namespace kmini::gram::detail
