#pragma once
// The Gram product over the ranks of a communicator: the library's
// distributed layer, which front ends (the Python module's comm=) call. Each
// rank passes its own rows; the ranks agree on the shapes, the arguments and
// the CLI's plan before anything is computed (place_rows, agree_params,
// agree_plan), then compute routes every output to the rank whose rows it is
// (gram_rank_routing.cpp). A light header: no Kokkos kernels, no Python.
#include "gram/gram_api.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

namespace kmini::gram {

// One problem over the ranks of `comm`: rank q holds rows [firsts[q],
// firsts[q + 1]) of a matrix, in rank order (a rank may hold none).
struct RankRows {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<std::int64_t> firsts;  // one per rank, then the total
  std::int64_t first() const;        // this rank's first row
  std::int64_t total() const { return firsts.back(); }
};

// Elements of this rank's dense C: its rows x targets, or for `upper` its
// rows of the packed upper triangle (row i: C(i, i..total-1)), concatenated.
std::int64_t dense_elements(const RankRows& rows, const ApiMatrix& a_mine, std::int64_t targets,
                            const ComputeParams& params);

// The bytes per rank the CLI's plan of a computation over `ranks` ranks
// holds (a and b: the whole problem's shapes): packed A and B held, the top-k
// lists and one slice, what the CLI checks an explicit slice height against.
// Throws UsageError, with the CLI's words, where params.memory_budget holds
// no plan.
double planned_bytes(int ranks, const ApiMatrix& a, const ApiMatrix* b, const ComputeParams& params);

// compute over the ranks of rows.comm (collective), with the CLI's plan
// (params.distribution): replicated (every rank holds all packed rows of A,
// gathered; with one input the symmetric half once) or ring (each rank holds
// the rows of the plan's chunks, moved there from the ranks that pass them,
// so no rank holds the whole problem). Each rank gets its own rows of every
// output: dense C into `dense_mine` (host memory), the top-k lists of its
// rows, the pairs whose i is in its rows (i global, (i, j) order), the
// row_counts of its rows; counts are the whole problem's. The same bytes as
// those rows of a one-process compute of all of A. B (or null) is whole on
// every rank (b_rows null; replicated only) or spread as b_rows says; the
// parameters are the same on every rank.
ComputeResult compute(const ApiExec& exec, const RankRows& rows, const ApiMatrix& a_mine, const ApiMatrix* b,
                      const RankRows* b_rows, const ComputeParams& params, void* dense_mine);

// A memory_budget that holds no plan (a MemoryError in Python). Arguments
// that do not fit the other ranks' throw std::invalid_argument (a ValueError).
// Either is thrown on every rank alike, with the same message.
struct BudgetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A rank's arguments: its own rows of A, B (whole, or its own rows with the
// ring or auto), where the rows are, and what the plan may use.
struct OverRanks {
  ComputeParams p;
  ApiMatrix a;
  std::optional<ApiMatrix> b;
  RankRows rows, b_rows;               // b_rows: B spread (distribution ring or auto)
  ApiMatrix whole, whole_b;            // all ranks' rows (for the plan and the budget)
  bool auto_rows = false;              // slice_rows from the budget, not the caller
  double budget = 0, dense_bytes = 0;  // this rank's memory_budget and dense C
  int ranks = 1;
  bool spread_b() const { return p.distribution != Distribution::Replicated; }
  // The CLI's plan takes the height (and with auto the distribution) from the
  // budget. One rank: the one-process call, which holds the whole problem (as
  // a ring of one does) in slices as tall as the budget allows.
  bool planned() const { return ranks > 1; }
  const ApiMatrix* bm() const { return b ? &*b : nullptr; }
  const ApiMatrix* whole_bm() const { return b ? &whole_b : nullptr; }
  std::int64_t targets() const { return b ? whole_b.rows : rows.total(); }
};

// Collective. The ranks' shapes: the same columns (and with B whole, B's
// shape) on every rank, which every rank sees alike; where each rank's rows
// are (o.rows, o.b_rows, o.whole, o.whole_b). std::invalid_argument naming
// the first problem.
void place_rows(OverRanks& o, MPI_Comm comm);

// Collective. The arguments every rank must pass alike, agreed before
// anything is computed: std::invalid_argument on every rank naming the first
// that differs (the budget may differ: the lowest is taken).
void agree_params(const OverRanks& o, MPI_Comm comm);

// Collective. The CLI's plan within the lowest budget of any rank, less the
// largest dense C (o.p.memory_budget): the same plan on every rank, or the
// same error (BudgetError; an explicit slice_rows beyond it:
// std::invalid_argument).
void agree_plan(OverRanks& o, MPI_Comm comm);

}  // namespace kmini::gram
