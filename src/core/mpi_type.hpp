#pragma once
// A committed MPI datatype of `count` contiguous elements of `base` (a packed
// row, a record), freed with its owner, so no return path leaks it.
#include <mpi.h>

#include <cstdint>

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

}  // namespace kmini::mpi
