#pragma once
// A kernel run's time to solution as consecutive named phases (results.json's
// `phases`): read, pack, compute, outputs, write, verification, ... Each
// switch fences the execution space instance, so device work launched in a
// phase is counted in that phase; switches belong at phase boundaries, never
// inside a timed loop.
#include <Kokkos_Core.hpp>

#include <string>
#include <utility>
#include <vector>

namespace kmini {

// (name, seconds) in the order the phases first started.
using Phases = std::vector<std::pair<std::string, double>>;

template <class ExecSpace>
class PhaseClock {
 public:
  explicit PhaseClock(ExecSpace exec) : exec_(exec) {}
  // Ends the current phase and starts `name` (seconds add up when a name recurs).
  void start(const std::string& name) {
    close();
    current_ = index(name);
    moved_ = 0;
    timer_.reset();
  }
  // `seconds` measured (fenced) inside the current phase that belong to phase
  // `name`: moved there, so the phases still add up to the elapsed time.
  void attribute(const std::string& name, double seconds) {
    if (current_ == kNone || seconds <= 0) return;
    phases_[index(name)].second += seconds;
    moved_ += seconds;
  }
  // Ends the current phase; the phases so far.
  const Phases& finish() {
    close();
    return phases_;
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t(0);
  std::size_t index(const std::string& name) {
    for (std::size_t i = 0; i < phases_.size(); ++i)
      if (phases_[i].first == name) return i;
    phases_.emplace_back(name, 0.0);
    return phases_.size() - 1;
  }
  void close() {
    if (current_ == kNone) return;
    exec_.fence();
    // What the phase attributed elsewhere is not its own (a negative rest is
    // timer resolution).
    const double own = timer_.seconds() - moved_;
    phases_[current_].second += own > 0 ? own : 0;
    current_ = kNone;
  }

  ExecSpace exec_;
  Kokkos::Timer timer_;
  Phases phases_;
  std::size_t current_ = kNone;
  double moved_ = 0;
};

}  // namespace kmini
