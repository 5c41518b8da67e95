#pragma once
// The device-resident RK4 integrator of one rank's block of rows. The state,
// the per-step map and the delta history live on the device from start() to
// the end; per step the host only launches two kernels (and, with more than
// one MPI rank, exchanges the three partial sums: MPI needs them on the host).
#include "core/huge_pages.hpp"
#include "core/timer.hpp"
#include "rk4/impl/rk4_affine_kernels.hpp"
#include "rk4/impl/rk4_kernels.hpp"
#include "rk4/impl/rk4_stage_kernels.hpp"

#include <mpi.h>
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

namespace kmini::rk4 {

static_assert(sizeof(Sums) == 3 * sizeof(double), "Sums travels through MPI as 3 doubles");

// Whether a model and a requested method resolve to the affine path.
// (The affine map has no row for Im G: a linear model must keep it constant.)
template <class Model>
bool resolves_to_affine(Method m) {
  static_assert(!Model::kLinear || Model::kConstantImG, "method affine keeps Im G constant");
  if (m == Method::Affine && !Model::kLinear)
    throw std::invalid_argument("rk4: method affine needs a linear model (kerr = 0)");
  return Model::kLinear && m != Method::Stages;
}

template <class T, class Exec, class Model = FGModel>
class Integrator {
 public:
  using Complex = Kokkos::complex<T>;
  using Mem = typename Exec::memory_space;
  using Field = Kokkos::View<Complex*, Mem>;
  using GField = SplitField<T, Mem>;  // G as (Re G, Im G), see SplitField
  using History = Kokkos::View<Kokkos::complex<double>*, Mem>;
  static constexpr int kChunk = Tuning<Exec>::chunk;
  // The step and stage kernels' policy: with the backend's launch bounds for
  // full occupancy (rk4.occupancy: full), else none.
  template <bool FullOccupancy>
  using ReducePolicy = Kokkos::RangePolicy<
      Exec, Kokkos::IndexType<std::int64_t>,
      std::conditional_t<FullOccupancy, typename Tuning<Exec>::full_occupancy_bounds, Kokkos::LaunchBounds<>>>;
  // rk4.grid: wave: the bounds that keep one wave of its grid resident.
  template <bool FullOccupancy>
  using WavePolicy = Kokkos::RangePolicy<Exec, Kokkos::IndexType<std::int64_t>,
                                         typename Tuning<Exec>::template wave_bounds<FullOccupancy>>;
  // rk4.loads: vector: elements per work item, one 16-byte pack of Re G.
  static constexpr int kPackChunk = Pack16<T>::size;

  // Every View is constructed here, in the initialiser list, and only ever
  // reassigned over a constructed View. This one allocates the state.
  Integrator(const Exec& exec, MPI_Comm comm, const Problem& p, std::int64_t local_count, const Model& model = Model())
      : Integrator(exec, comm, p, local_count, model, alloc_field(local_count),
                   GField{alloc_real("kmini::rk4::G_re", local_count), alloc_real("kmini::rk4::G_im", local_count)}) {}

  // This one integrates the caller's state in place (the library function).
  Integrator(const Exec& exec, MPI_Comm comm, const Problem& p, std::int64_t local_count, const Model& model,
             const Field& F, const GField& G)
      : exec_(exec),
        comm_(comm),
        p_(p),
        model_(model),
        affine_(resolves_to_affine<Model>(p.method)),
        count_(local_count),
        F_(F),
        G_(G),
        history_("kmini::rk4::delta_history", p.steps + 1),
        map_("kmini::rk4::step_map", kMapSize),
        sums_("kmini::rk4::sums"),
        sums_host_(Kokkos::create_mirror_view(sums_)),
        stage_sums_{Kokkos::View<Sums, Mem>("kmini::rk4::stage_sums"),
                    Kokkos::View<Sums, Mem>("kmini::rk4::stage_sums"),
                    Kokkos::View<Sums, Mem>("kmini::rk4::stage_sums")},
        first_bad_("kmini::rk4::first_bad_step"),
        I0_("kmini::rk4::invariant0", 0) {
    if (static_cast<std::int64_t>(F_.extent(0)) != count_ || static_cast<std::int64_t>(G_.re.extent(0)) != count_ ||
        static_cast<std::int64_t>(G_.im.extent(0)) != count_)
      throw std::invalid_argument("rk4: the fields' sizes differ from the element count");
    MPI_Comm_size(comm_, &ranks_);
    // 16-byte packs need 16-byte aligned fields (Kokkos' allocations are; a
    // caller's storage may not be: it then runs the backend's default chunk).
    packed_ = p_.vector_loads && aligned16(F_.data()) && aligned16(G_.re.data()) && aligned16(G_.im.data());
  }

  // The current state; write the initial state here before start().
  const Field& F() const { return F_; }
  const GField& G() const { return G_; }
  // G as one complex View (same extent, any layout) in and out, on the device.
  template <class ComplexView>
  void set_G(const ComplexView& g) const {
    split_field(exec_, g, G_);
  }
  template <class ComplexView>
  void get_G(const ComplexView& g) const {
    join_field(exec_, G_, g);
  }
  const History& history() const { return history_; }
  std::int64_t step_index() const { return k_; }
  bool g_is_real() const { return max_abs_gc_ == 0; }
  bool affine() const { return affine_; }
  // Whether the step kernels run 16-byte packs (rk4.loads: vector on aligned fields).
  bool packed() const { return packed_; }
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
      I0_ =
          Kokkos::View<double*, Mem>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kmini::rk4::invariant0"), count_);
      compute_invariant(exec_, F(), G(), I0_);
    }
    im_g_settled_ = false;
    k_ = k0;
    advance();
  }

  // One step: k -> k + 1.
  void step() {
    if (affine_) step_affine();
    else step_stages();
    ++k_;
    advance();
  }

  // Method affine: one fused kernel per step applying the step's map in place.
  void step_affine() {
    // A tuning choice (rk4.chunk): 4 elements per GPU thread share its loads of
    // the step's map; the backend's default otherwise. (Four or two elements a
    // warp's width apart, coalesced with more loads in flight, are slower on a
    // GPU than one: docs/performance.md, "NVIDIA H200".)
    if (p_.full_occupancy) return step_affine_bounded<true>();
    step_affine_bounded<false>();
  }

  template <bool FullOccupancy>
  void step_affine_bounded() {
    if (packed_) return step_affine_with<kPackChunk, FullOccupancy, true>();
    if (kChunk != 4 && p_.chunk == 4) return step_affine_with<4, FullOccupancy>();
    if (kChunk != 1 && p_.chunk == 1) return step_affine_with<1, FullOccupancy>();
    step_affine_with<kChunk, FullOccupancy>();
  }

  template <int Chunk, bool FullOccupancy, bool Packed = false>
  void step_affine_with() {
    const StepFunctor<T, Chunk, Mem, Packed> f(F_, G_, map_, count_ / Chunk);
    const std::int64_t items = f.full_chunks + count_ % Chunk;
    reduce<FullOccupancy>("kmini::rk4::step", f, items, sums_);
    // The one host round trip per step, and only under MPI: 3 doubles.
    if (ranks_ > 1) allreduce(sums_);
  }

  // A step or stage kernel: one work item per thread on the backend's grid,
  // or (rk4.grid: wave) one wave of threads, each looping over the items.
  template <bool FullOccupancy, class Functor>
  void reduce(const char* name, const Functor& f, const std::int64_t items, const Kokkos::View<Sums, Mem>& out) {
    if (p_.wave) {
      const int blocks = FullOccupancy ? Tuning<Exec>::full_occupancy_blocks : Tuning<Exec>::wave_blocks;
      const std::int64_t threads = std::min(items, wave_threads(exec_, blocks, Tuning<Exec>::wave_block));
      Kokkos::parallel_reduce(name, WavePolicy<FullOccupancy>(exec_, 0, threads),
                              GridStride<Functor>{f, items, threads}, Kokkos::Sum<Sums, Mem>(out));
      return;
    }
    Kokkos::parallel_reduce(name, ReducePolicy<FullOccupancy>(exec_, 0, items), f, Kokkos::Sum<Sums, Mem>(out));
  }

  // Method stages: one fused kernel per step (per_step) or one per stage
  // (per_stage), each reducing the sums its stage produced.
  void step_stages() {
    if (Model::kConstantImG && !im_g_settled_) {
      settle_constant_im_g(exec_, G_.im, static_cast<T>(p_.dt));
      im_g_settled_ = true;
    }
    if (!p_.per_stage) {
      stage<0>("kmini::rk4::stages_step", sums_);
      return;
    }
    // Stage s reads the sums of stages 1..s-1 and writes its own; the last
    // one writes the step's sums.
    stage<1>("kmini::rk4::stage_1", stage_sums_[0]);
    stage<2>("kmini::rk4::stage_2", stage_sums_[1]);
    stage<3>("kmini::rk4::stage_3", stage_sums_[2]);
    stage<4>("kmini::rk4::stage_4", sums_);
  }

  template <int Stage>
  void stage(const char* name, const Kokkos::View<Sums, Mem>& out) {
    if (p_.full_occupancy) return stage_bounded<Stage, true>(name, out);
    stage_bounded<Stage, false>(name, out);
  }

  template <int Stage, bool FullOccupancy>
  void stage_bounded(const char* name, const Kokkos::View<Sums, Mem>& out) {
    if (packed_) return stage_with<kPackChunk, Stage, FullOccupancy, true>(name, out);
    stage_with<kChunk, Stage, FullOccupancy, false>(name, out);
  }

  template <int Chunk, int Stage, bool FullOccupancy, bool Packed>
  void stage_with(const char* name, const Kokkos::View<Sums, Mem>& out) {
    StageFunctor<T, Chunk, Stage, Mem, Model, Packed> f(F_, G_, history_, stage_sums_[0], stage_sums_[1],
                                                        stage_sums_[2], count_ / Chunk);
    f.model = model_;
    f.k = k_;
    f.coupling_g = p_.g;
    f.dt = static_cast<T>(p_.dt);
    const std::int64_t items = f.full_chunks + count_ % Chunk;
    reduce<FullOccupancy>(name, f, items, out);
    // Under MPI, one allreduce of the stage's sums (3 doubles).
    if (ranks_ > 1) allreduce(out);
  }

  // Over several ranks, a stop asked on one rank (Ctrl-C from Python) rides
  // on the next step's sums: every rank reads stop_agreed() true after the
  // same step, at no extra message. One rank: stop_agreed() is the vote.
  void vote_stop() {
    stop_vote_ = 1;
    if (ranks_ == 1) stop_agreed_ = true;
  }
  bool stop_agreed() const { return stop_agreed_; }

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
  // Stage arrays, advised into huge pages before their first touch (core/huge_pages.hpp).
  static Field alloc_field(std::int64_t count) {
    const Field f(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("kmini::rk4::F")), count);
    advise_huge_pages(f);
    return f;
  }
  static Kokkos::View<T*, Mem> alloc_real(const char* label, std::int64_t count) {
    const Kokkos::View<T*, Mem> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), count);
    advise_huge_pages(v);
    return v;
  }

  // Sums a device Sums over the ranks in place (through the host: 3 doubles),
  // and with them the ranks' votes to stop (a fourth double, vote_stop).
  void allreduce(const Kokkos::View<Sums, Mem>& v) {
    Kokkos::deep_copy(exec_, sums_host_, v);
    exec_.fence();
    Sums& s = sums_host_();
    double all[4] = {s.fx, s.fy, s.ga, stop_vote_};
    MPI_Allreduce(MPI_IN_PLACE, all, 4, MPI_DOUBLE, MPI_SUM, comm_);
    s.fx = all[0];
    s.fy = all[1];
    s.ga = all[2];
    stop_agreed_ = stop_agreed_ || all[3] > 0;
    Kokkos::deep_copy(exec_, v, sums_host_);
  }

  void advance() {
    if (!affine_) {
      RecordFunctor<Mem> r(sums_, history_, first_bad_);
      r.k = k_;
      r.g = p_.g;
      r.delta0 = p_.delta0;
      r.per_stage = p_.per_stage;
      Kokkos::parallel_for("kmini::rk4::record", Kokkos::RangePolicy<Exec>(exec_, 0, 1), r);
      return;
    }
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
  Model model_;
  bool affine_ = true;
  bool packed_ = false;  // rk4.loads: vector, and the fields are 16-byte aligned
  std::int64_t count_ = 0;
  int ranks_ = 1;
  double stop_vote_ = 0;  // vote_stop
  bool stop_agreed_ = false;
  std::int64_t k_ = 0;
  double sum_gc_ = 0, max_abs_gc_ = 0;
  bool im_g_settled_ = false;  // settle_constant_im_g done since start()
  Field F_;                    // the state, updated in place by every method
  GField G_;
  History history_;
  Kokkos::View<T*, Mem> map_;
  Kokkos::View<Sums, Mem> sums_;
  typename Kokkos::View<Sums, Mem>::HostMirror sums_host_;
  Kokkos::View<Sums, Mem> stage_sums_[3];  // per_stage stages: sums of the states of stages 1..3
  Kokkos::View<std::int64_t, Mem> first_bad_;
  Kokkos::View<double*, Mem> I0_;
};

}  // namespace kmini::rk4
