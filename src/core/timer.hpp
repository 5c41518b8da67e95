#pragma once
// Wall-clock timing of device work: every reading fences the execution space
// instance first, so asynchronous kernels are counted in full.
#include <Kokkos_Core.hpp>

namespace kmini {

template <class ExecSpace>
class FencedTimer {
 public:
  explicit FencedTimer(ExecSpace exec) : exec_(exec) { reset(); }
  void reset() {
    exec_.fence();
    timer_.reset();
  }
  double seconds() const {
    exec_.fence();
    return timer_.seconds();
  }

 private:
  ExecSpace exec_;
  Kokkos::Timer timer_;
};

// Kokkos profiling region for a phase, visible in Kokkos Tools and Nsight.
class ScopedRegion {
 public:
  explicit ScopedRegion(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(const ScopedRegion&) = delete;
  ScopedRegion& operator=(const ScopedRegion&) = delete;
};

}  // namespace kmini
