#pragma once
// The sparse outputs as tab-separated text with the rows' IDs (IDs of FPS
// inputs, else row numbers): write.top_k.text and write.pairs.text, made
// from the same records as the .npy files (gram_records.hpp), so both say
// the same; written for all ranks through the distributed writer (raw bytes).
#include "gram/gram.hpp"
#include "io/npy.hpp"

#include <mpi.h>

#include <cstdint>
#include <memory>
#include <string>

namespace kmini::gram::detail {

// The header lines of the two files.
inline constexpr const char* kTopKTextHeader = "query_id\trank\ttarget_id\tscore\n";
inline constexpr const char* kPairsTextHeader = "query_id\ttarget_id\tscore\n";

// A record's value as text: counts as integers, similarities as the shortest
// decimal without an exponent that reads back as the same float32.
std::string score_text(Similarity s, const char* value);

// Lines "query_id TAB rank TAB target_id TAB score" of rows [row0, row0 + rows)
// of top-k records (k per row, best first; missing partners left out), rank from 1.
std::string top_k_lines(const Config& c, std::int64_t row0, std::int64_t rows, std::int64_t k, const char* records);
// chemfp's simsearch format of the same lists: the header (#Simsearch/1,
// num_bits, type with k and the threshold, software, queries, targets), then
// a line per query: the partners' count, query_id, then target_id TAB score
// of each, best first; scores with chemfp's decimals for num_bits.
std::string simsearch_header(const Config& c);
std::string simsearch_lines(const Config& c, std::int64_t row0, std::int64_t rows, std::int64_t k, const char* records);
// Lines "query_id TAB target_id TAB score" of `n` pair records.
std::string pairs_lines(const Config& c, std::uint64_t n, const char* records);

// One text file for all ranks: each collective append puts every rank's text
// in the order of the ranks' keys (those without text pass key -1), after
// what earlier appends wrote; rank 0's header first.
class TextFile {
 public:
  TextFile(MPI_Comm comm, const std::string& path, const char* header);
  void append(std::int64_t key, const std::string& text);  // collective
  void commit();                                           // collective
 private:
  MPI_Comm comm_;
  npy::DistributedWriter writer_;
  std::uint64_t written_ = 0;
};

}  // namespace kmini::gram::detail
