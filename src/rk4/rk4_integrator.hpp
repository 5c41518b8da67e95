#pragma once
// The device-resident RK4 integrator of one rank's block of rows. The state,
// the per-step map and the delta history live on the device from start() to
// the end; per step the host only launches two kernels (and, with more than
// one MPI rank, exchanges the three partial sums: MPI needs them on the host).
#include "core/timer.hpp"
#include "rk4/rk4_kernels.hpp"

#include <Kokkos_Core.hpp>
#include <mpi.h>

#include <cstdint>

namespace kmini::rk4 {

static_assert(sizeof(Sums) == 3 * sizeof(double), "Sums travels through MPI as 3 doubles");

struct Problem {
  std::int64_t n = 256;  // fields are n x n
  double dt = 1e-3;
  std::int64_t steps = 100;
  double g = 0;  // delta = g * sum(F)
  Kokkos::complex<double> delta0 = Kokkos::complex<double>(0, 0);  // per_step: delta of step 1
  bool per_stage = true;
  std::int64_t elements() const { return n * n; }
};

template <class T, class Exec>
class Integrator {
 public:
  using Complex = Kokkos::complex<T>;
  using Mem = typename Exec::memory_space;
  using Field = Kokkos::View<Complex*, Mem>;
  using History = Kokkos::View<Kokkos::complex<double>*, Mem>;
  static constexpr int kChunk = StepTuning<Exec>::chunk;

  // Every View is constructed here, in the initialiser list, and only ever
  // reassigned over a constructed View.
  Integrator(const Exec& exec, MPI_Comm comm, const Problem& p, std::int64_t local_count)
      : exec_(exec),
        comm_(comm),
        p_(p),
        count_(local_count),
        F_{field("kmini::rk4::F"), field("kmini::rk4::F")},
        G_{field("kmini::rk4::G"), field("kmini::rk4::G")},
        history_("kmini::rk4::delta_history", p.steps + 1),
        map_("kmini::rk4::step_map", kMapSize),
        sums_("kmini::rk4::sums"),
        sums_host_(Kokkos::create_mirror_view(sums_)),
        first_bad_("kmini::rk4::first_bad_step"),
        I0_("kmini::rk4::invariant0", 0) {
    MPI_Comm_size(comm_, &ranks_);
  }

  // The current state; write the initial state here before start().
  const Field& F() const { return F_[cur_]; }
  const Field& G() const { return G_[cur_]; }
  const History& history() const { return history_; }
  std::int64_t step_index() const { return k_; }
  bool g_is_real() const { return max_abs_gc_ == 0; }
  double sum_im_g() const { return sum_gc_; }

  // Starts at step k0 from the current state. `sums`: the global sums of the
  // state as a checkpoint recorded them (bitwise restart); recomputed if null.
  // With track_invariant and a real G, keeps |F|^2 + (G - 1/2)^2 per element.
  void start(std::int64_t k0, const Sums* sums, bool track_invariant) {
    Sums s;
    local_sums(exec_, F(), G(), s, sum_gc_, max_abs_gc_);
    if (ranks_ > 1) {
      MPI_Allreduce(MPI_IN_PLACE, reinterpret_cast<double*>(&s), 3, MPI_DOUBLE, MPI_SUM, comm_);
      MPI_Allreduce(MPI_IN_PLACE, &sum_gc_, 1, MPI_DOUBLE, MPI_SUM, comm_);
      MPI_Allreduce(MPI_IN_PLACE, &max_abs_gc_, 1, MPI_DOUBLE, MPI_MAX, comm_);
    }
    sums_host_() = sums ? *sums : s;
    Kokkos::deep_copy(exec_, sums_, sums_host_);
    Kokkos::deep_copy(exec_, first_bad_, std::int64_t(-1));
    if (track_invariant && g_is_real()) {
      I0_ = Kokkos::View<double*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::rk4::invariant0"),
                                       count_);
      compute_invariant(exec_, F(), G(), I0_);
    }
    k_ = k0;
    advance();
  }

  // One step: k -> k + 1.
  void step() {
    const int nxt = 1 - cur_;
    const StepFunctor<T, kChunk, Mem> f(F_[cur_], G_[cur_], F_[nxt], G_[nxt], map_, count_ / kChunk);
    const std::int64_t items = f.full_chunks + count_ % kChunk;
    Kokkos::parallel_reduce("kmini::rk4::step",
                            Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>>(exec_, 0, items), f,
                            Kokkos::Sum<Sums, Mem>(sums_));
    if (ranks_ > 1) {
      // The one host round trip per step, and only under MPI: 3 doubles.
      Kokkos::deep_copy(exec_, sums_host_, sums_);
      exec_.fence();
      MPI_Allreduce(MPI_IN_PLACE, reinterpret_cast<double*>(&sums_host_()), 3, MPI_DOUBLE, MPI_SUM, comm_);
      Kokkos::deep_copy(exec_, sums_, sums_host_);
    }
    cur_ = nxt;
    ++k_;
    advance();
  }

  // Host synchronisation points (not called per step).
  std::int64_t first_bad_step() const {
    std::int64_t bad = 0;
    Kokkos::deep_copy(exec_, bad, first_bad_);
    exec_.fence();
    return bad;
  }
  Sums sums() const {
    Kokkos::deep_copy(exec_, sums_host_, sums_);
    exec_.fence();
    return sums_host_();
  }
  bool tracks_invariant() const { return static_cast<std::int64_t>(I0_.extent(0)) == count_ && g_is_real(); }
  // Global max drift of the invariant since start(); collective.
  double invariant_drift() const {
    ScopedRegion region("kmini::rk4::invariant_drift");
    double d = local_invariant_drift(exec_, F(), G(), Kokkos::View<const double*, Mem>(I0_));
    if (ranks_ > 1) MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, comm_);
    return d;
  }

 private:
  Field field(const char* label) const {
    return Field(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), count_);
  }

  void advance() {
    AdvanceFunctor<T, Mem> a(sums_, history_, map_, first_bad_);
    a.k = k_;
    a.steps = p_.steps;
    a.sum_gc = sum_gc_;
    a.count = static_cast<double>(p_.elements());
    a.g = p_.g;
    a.dt = p_.dt;
    a.delta0 = p_.delta0;
    a.per_stage = p_.per_stage;
    Kokkos::parallel_for("kmini::rk4::advance", Kokkos::RangePolicy<Exec>(exec_, 0, 1), a);
  }

  Exec exec_;
  MPI_Comm comm_;
  Problem p_;
  std::int64_t count_ = 0;
  int ranks_ = 1;
  int cur_ = 0;
  std::int64_t k_ = 0;
  double sum_gc_ = 0, max_abs_gc_ = 0;
  Field F_[2], G_[2];
  History history_;
  Kokkos::View<T*, Mem> map_;
  Kokkos::View<Sums, Mem> sums_;
  typename Kokkos::View<Sums, Mem>::HostMirror sums_host_;
  Kokkos::View<std::int64_t, Mem> first_bad_;
  Kokkos::View<double*, Mem> I0_;
};

}  // namespace kmini::rk4
