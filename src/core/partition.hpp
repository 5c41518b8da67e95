#pragma once
// How kmini splits n items (rk4 rows, discount dates, the rows of a gram
// input file) over ranks: balanced contiguous blocks, the first n % ranks
// ranks one item more. Every split in kmini is this one.
#include <algorithm>
#include <cstdint>

namespace kmini {

struct BlockRange {
  std::int64_t first = 0, count = 0;  // items [first, first + count)
};

inline BlockRange block_range(std::int64_t n, int rank, int ranks) {
  const std::int64_t base = n / ranks, extra = n % ranks;
  return {rank * base + std::min<std::int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

}  // namespace kmini
