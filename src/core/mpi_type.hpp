#pragma once
// MPI's bookkeeping for messages: a committed MPI datatype of `count`
// contiguous elements of `base` (a packed row, a record), freed with its
// owner, so no return path leaks it; the displacements of per-rank counts.
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kmini::mpi {

class ContiguousType {
 public:
  ContiguousType(std::int64_t count, MPI_Datatype base) {
    MPI_Type_contiguous(static_cast<int>(count), base, &type_);
    MPI_Type_commit(&type_);
  }
  ~ContiguousType() {
    if (type_ != MPI_DATATYPE_NULL) MPI_Type_free(&type_);
  }
  ContiguousType(const ContiguousType&) = delete;
  ContiguousType& operator=(const ContiguousType&) = delete;
  MPI_Datatype get() const { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
};

// Displacements of `counts` laid end to end (the *v collectives' displs).
inline std::vector<int> displacements(const std::vector<int>& counts) {
  std::vector<int> d(counts.size(), 0);
  for (std::size_t q = 1; q < counts.size(); ++q) d[q] = d[q - 1] + counts[q - 1];
  return d;
}

}  // namespace kmini::mpi
