#pragma once
// The peak probe: the engine's inner loop with its operands in L1 (hosts:
// every compiled-in micro-kernel; GPUs: the staged micro-tiles or the 1-bit
// mma on panels in team scratch), the roof the tiles' rate is judged against.
#include "core/random.hpp"
#include "gram/gram_params.hpp"
#include "gram/impl/gram_micro_kernels.hpp"
#include "gram/impl/gram_tensor_core.hpp"

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace kmini::gram {

// A probe's time: launch(reps) runs the probe kernel for `reps` repeats and
// returns the checksum it reduced (used here, so the work cannot be dropped).
// One warm-up, then the best of 3 runs: a peak is the best rate seen, as the
// kernel's time is the best of its repeats (single runs vary by several per cent).
template <class Exec, class Launch>
double best_probe_seconds(const Exec& exec, const Launch& launch, int repeats, std::uint64_t* checksum = nullptr) {
  auto run = [&](int reps) {
    Kokkos::Timer timer;
    const std::uint64_t total = launch(reps);
    exec.fence();
    const double seconds = timer.seconds();
    volatile std::uint64_t sink = total;
    (void)sink;
    if (checksum) *checksum = total;  // the timed runs' (all of `repeats` repeats)
    return seconds;
  };
  run(1);
  double seconds = run(repeats);
  for (int t = 1; t < 3; ++t) seconds = std::min(seconds, run(repeats));
  return seconds;
}

// One probe team's repeats of the engine.
template <class P, bool TensorCore, class Member>
KOKKOS_INLINE_FUNCTION void probe_team(const Member& team, const Word* pa, const Word* pb, std::uint32_t* ct,
                                       int reps) {
  if constexpr (TensorCore && tensor_core::kAvailable) {
    const int warp = team.team_rank() / tensor_core::kLanes, lane = team.team_rank() % tensor_core::kLanes;
    std::int32_t acc[tensor_core::kTilesPerWarp][4] = {};
    for (int rep = 0; rep < reps; ++rep) tensor_core::chunk_mma<P>(pa, pb, P::chunk, warp, lane, acc);
    tensor_core::store_warp<P>(ct, warp, lane, acc);
  } else {
    for (int rep = 0; rep < reps; ++rep) team_micro_tiles<P, P::chunk>(team, pa, pb, ct, P::chunk);
  }
}

// The probe's team: random panels in scratch, `reps` passes of the engine
// over them, a checksum of the tile so no pass is optimised away.
template <bool TensorCore, class Exec>
struct ProbeKernel {
  using P = Tuning;
  using Member = typename Kokkos::TeamPolicy<Exec>::member_type;
  int reps;
  KOKKOS_INLINE_FUNCTION void operator()(const Member& team, std::uint64_t& sum) const {
    Word* pa = static_cast<Word*>(team.team_shmem().get_shmem(panel_words<P>() * sizeof(Word)));
    Word* pb = static_cast<Word*>(team.team_shmem().get_shmem(panel_words<P>() * sizeof(Word)));
    auto* ct = static_cast<std::uint32_t*>(team.team_shmem().get_shmem(ct_bytes<P>()));
    const std::uint64_t seed = static_cast<std::uint64_t>(team.league_rank());
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, static_cast<int>(panel_words<P>())), [&](const int e) {
      pa[e] = random::hash(seed, e);
      pb[e] = random::hash(seed + 0x9e37u, e);
    });
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, P::tile * ct_stride<P>()), [&](const int e) { ct[e] = 0; });
    team.team_barrier();
    probe_team<P, TensorCore>(team, pa, pb, ct, reps);
    team.team_barrier();
    for (int e = team.team_rank(); e < P::tile * ct_stride<P>(); e += team.team_size())
      sum += std::uint64_t(ct[e]) * (e + 1);
  }
};

// ---------------------------------------------------------------------------
// Peak probe of staged (GPU) builds: teams of the tile kernel's shape, each
// with its panels in team scratch filled once, run the chunk's inner loop
// `repeats` times: the micro-tiles (or, TensorCore, the warps' 1-bit mma) on
// ideal data, without the staging from global memory, the tile edges and the
// C-tile writes. One team per team_size resident threads. Returns executed
// bit-ops per second, counted as the tiles count them (64 per word pair).
template <bool TensorCore, class Exec>
double probe_staged_peak(const Exec& exec, std::int64_t workers, int repeats) {
  using P = Tuning;
  const int league = static_cast<int>(std::max<std::int64_t>(1, workers / P::team_size));
  Kokkos::TeamPolicy<Exec> policy(exec, league, P::team_size);
  policy.set_scratch_size(0, Kokkos::PerTeam(team_scratch_bytes<P>()));
  auto launch = [&](int reps) {
    std::uint64_t total = 0;
    Kokkos::parallel_reduce(TensorCore ? "kmini::gram::probe_tensor_core" : "kmini::gram::probe", policy,
                            ProbeKernel<TensorCore, Exec>{reps}, total);
    return total;
  };
  const double seconds = best_probe_seconds(exec, launch, repeats);
  return double(league) * repeats * P::tile * P::tile * double(P::chunk) * 64 / seconds;
}

// The tensor-core engine's probe (0 where this build has no such engine).
template <class Exec>
double probe_tensor_core_peak(const Exec& exec, std::int64_t workers, int repeats) {
  if constexpr (tensor_core::kAvailable && Tuning::staged) return probe_staged_peak<true>(exec, workers, repeats);
  return 0;
}

// ---------------------------------------------------------------------------
// Peak probe of host builds: the AND+popcount rate of micro-kernel MK
// (rows_block) with its operands in L1: each worker repeatedly sweeps a private
// 8 x 256-word block (one tile chunk of 4 rows against 4: 16 KiB, cache
// resident). What the tiles lose to it is what tiling, memory and the C-tile
// updates cost. Returns executed bit-ops per second.
// What one host probe measured, for the report and for the test that checks
// the probe itself (Gram_PeakProbeDoesAndTimesTheWorkItCounts).
struct HostProbeRun {
  double seconds = 0;          // the best of the 3 timed runs
  double bit_ops = 0;          // executed bit-ops of one timed run
  std::uint64_t checksum = 0;  // sum over workers and the 16 counts c[e] of c[e] * (e + 1)
  double rate() const { return bit_ops / seconds; }
};

template <class Block>
struct HostProbeFill {
  Block block;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t e) const {
    block.data()[e] = random::hash(7, static_cast<std::uint64_t>(e));
  }
};

// One worker's 4 x 4 block of rows (8 rows of the block view from wkr * 8),
// `reps` times.
template <MicroKernel MK, class Block>
struct HostProbeKernel {
  using P = Tuning;
  static constexpr int kWords = P::chunk, kRows = 8;
  Block block;
  int reps;
  KOKKOS_INLINE_FUNCTION void operator()(const std::int64_t wkr, std::uint64_t& sum) const {
    const Word* ra[4];
    const Word* rb[4];
    for (int r = 0; r < 4; ++r) {
      ra[r] = &block(wkr * kRows + r, 0);
      rb[r] = &block(wkr * kRows + 4 + r, 0);
    }
    // Each entry grows by at most reps x 256 x 64 < 2^32 (repeats <= 20000).
    std::uint32_t c[16] = {};
    for (int rep = 0; rep < reps; ++rep) {
      reload_barrier(ra, rb);
      rows_block<P, kWords, MK>(ra, rb, kWords, c, 4);
    }
    for (int e = 0; e < 16; ++e) sum += std::uint64_t(c[e]) * (e + 1);
  }
  // The repeats read the same rows, so a compiler may count them once (GCC 12
  // does for the AVX2 and AVX-512BW probes with -march=native, which then
  // report the repeat count times the real rate). An empty asm that may write
  // any memory the rows point to makes every repeat load and count again
  // (host code only).
  KOKKOS_INLINE_FUNCTION static void reload_barrier(const Word* const* ra, const Word* const* rb) {
#if defined(__GNUC__) && !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__)
    asm volatile("" : : "r"(ra), "r"(rb) : "memory");
#else
    (void)ra;
    (void)rb;
#endif
  }
};

template <MicroKernel MK, class Exec>
HostProbeRun probe_host_run(const Exec& exec, std::int64_t workers, int repeats) {
  using P = Tuning;
  constexpr int kWords = P::chunk, kRows = 8;
  static_assert(P::mr == 4 && P::nr == 4, "the probe's block is 4 x 4 rows");
  Kokkos::View<Word**, Kokkos::LayoutRight, typename Exec::memory_space> block("kmini::gram::probe_block",
                                                                               workers * kRows, kWords);
  Kokkos::parallel_for("kmini::gram::probe_fill", Kokkos::RangePolicy<Exec>(exec, 0, workers * kRows * kWords),
                       HostProbeFill<decltype(block)>{block});
  auto launch = [&](int reps) {
    std::uint64_t total = 0;
    Kokkos::parallel_reduce("kmini::gram::probe", Kokkos::RangePolicy<Exec>(exec, 0, workers),
                            HostProbeKernel<MK, decltype(block)>{block, reps}, total);
    return total;
  };
  HostProbeRun r;
  r.seconds = best_probe_seconds(exec, launch, repeats, &r.checksum);
  r.bit_ops = double(workers) * repeats * kWords * 16 * 64;
  return r;
}

template <MicroKernel MK, class Exec>
double probe_host_peak(const Exec& exec, std::int64_t workers, int repeats) {
  return probe_host_run<MK>(exec, workers, repeats).rate();
}

// The roof: the best rate of the micro-kernels this build contains (not only
// the one the tiles use: a weak kernel must show against it), and which one.
struct ProbeResult {
  double peak = 0;                             // executed bit-ops/s, the best of `rate`
  MicroKernel best = MicroKernel::Portable;    // the micro-kernel that set it
  double rate[std::size(kMicroKernels)] = {};  // per micro-kernel; 0: not in this build (or staged)
};

// The probe of this build's tiles: staged panels on GPUs (the portable
// micro-tiles), every compiled-in micro-kernel on hosts.
template <class Exec>
ProbeResult probe_and_popcount_peak(const Exec& exec, std::int64_t workers, int repeats) {
  ProbeResult p;
  if constexpr (Tuning::staged) {
    p.peak = p.rate[0] = probe_staged_peak<false>(exec, workers, repeats);
  } else {
    for (std::size_t i = 0; i < std::size(kMicroKernels); ++i) {
      if (!micro_kernel_compiled(kMicroKernels[i])) continue;
      p.rate[i] = with_micro_kernel(
          kMicroKernels[i], [&](auto mk) { return probe_host_peak<decltype(mk)::value>(exec, workers, repeats); });
      if (p.rate[i] > p.peak) {
        p.peak = p.rate[i];
        p.best = kMicroKernels[i];
      }
    }
  }
  return p;
}

}  // namespace kmini::gram
