#pragma once
// The best of repeated timings of a step that every rank runs together:
// each repeat counts as long as its slowest rank took (the time the whole
// job waits), and each rank keeps its own time in the best repeat. The
// driver gathers those for min/median/max over ranks in results.json; their
// max is slowest().
#include "core/environment.hpp"

#include <limits>

namespace kmini {

class BestOverRepeats {
 public:
  // Collective: every rank adds its time of the same repeat.
  void add(MPI_Comm comm, double mine) {
    const double slowest = allreduce_max(comm, mine);
    // Every rank sees the same `slowest`, so all keep the same repeat.
    if (slowest < slowest_) {
      slowest_ = slowest;
      mine_ = mine;
    }
  }
  double slowest() const { return slowest_; }  // infinity before the first add
  double mine() const { return mine_; }

 private:
  double slowest_ = std::numeric_limits<double>::infinity();
  double mine_ = std::numeric_limits<double>::infinity();
};

}  // namespace kmini
