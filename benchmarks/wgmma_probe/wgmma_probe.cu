// kmini_wgmma_probe: the dense rate of Hopper's warpgroup 1-bit MMA,
// wgmma.mma_async.sync.aligned.m64nNk256.s32.b1.b1.and.popc (N = 256, 128, 8),
// against the warp-level mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc
// that the gram tensor-core engine issues, both measured in one run on the
// same clocks, with one wgmma result of every shape checked exactly against a
// host AND+popcount. It decides by measurement whether a wgmma engine would
// raise the gram tiles' roof. Standalone (no Kokkos, no MPI): plain nvcc for
// sm_90a only (wgmma exists on sm_90a, not sm_90):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a \
//        -I src benchmarks/wgmma_probe/wgmma_probe.cu -o kmini_wgmma_probe
// Usage: kmini_wgmma_probe [--json PATH] [--seconds S] [--repeats R]
// Prints one JSON object (to PATH with --json) and one summary line on stderr.
// Exit: 0 measured and exact; 3 measured but a check failed; 1 a CUDA error;
// 2 bad arguments; 77 not a compute capability 9.0 device (nothing measured).
#include "gram/impl/gram_wgmma_instructions.cuh"
#include "gram/impl/gram_wgmma_layout.hpp"
#include "gram/impl/gram_wgmma_probe.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace wg = kmini::gram::wgmma;

namespace {

void check(cudaError_t e, const char* what, int line) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "kmini_wgmma_probe: line %d: %s: %s (%s)\n", line, what, cudaGetErrorString(e),
               cudaGetErrorName(e));
  std::exit(1);
}
#define KMINI_CHECK(call) check((call), #call, __LINE__)
// After a launch: the launch's own error, then the kernel's.
#define KMINI_CHECK_LAUNCH(what)          \
  do {                                    \
    KMINI_CHECK(cudaGetLastError());      \
    KMINI_CHECK(cudaDeviceSynchronize()); \
  } while (0)

// k steps staged per tile (wg::kKSteps = 4: rows of 1024 bits), so a rep is 4
// instructions along k on different shared memory, as in a tile's k loop.
using wg::kKSteps;
constexpr int kMmaWarps = 8;   // mma.sync blocks: 256 threads
constexpr int kMmaChains = 8;  // independent accumulators per warp: issue-bound, not latency-bound

// --- wgmma: the instructions (gram_wgmma_instructions.cuh) ------------------------
using namespace kmini::gram::wgmma::instructions;
using kmini::gram::wgmma::probe_kernels::Clocks;
using kmini::gram::wgmma::probe_kernels::global_ns;
using kmini::gram::wgmma::probe_kernels::wgmma_kernel;

// --- mma.sync -----------------------------------------------------------------------
__device__ __forceinline__ void mma_sync(const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                                         std::int32_t (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Registers only: each warp issues kMmaChains independent accumulations per rep.
__global__ void __launch_bounds__(kMmaWarps* wg::kWarp) mma_sync_kernel(int reps, std::int32_t* sink, Clocks* clocks) {
  const int t = threadIdx.x;
  const bool timer = blockIdx.x == 0 && t == 0;
  Clocks c{};
  if (timer) c.cycles0 = clock64(), c.ns0 = global_ns();
  const std::uint32_t seed = (blockIdx.x * blockDim.x + t) * 0x9E3779B9u;
  std::uint32_t a[4], b[2];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = seed ^ (0x85EBCA6Bu * (i + 1));
#pragma unroll
  for (int i = 0; i < 2; ++i) b[i] = seed ^ (0xC2B2AE35u * (i + 1));
  std::int32_t acc[kMmaChains][4] = {};
  for (int rep = 0; rep < reps; ++rep)
#pragma unroll
    for (int k = 0; k < kMmaChains; ++k) mma_sync(a, b, acc[k]);
  std::int32_t sum = 0;
#pragma unroll
  for (int k = 0; k < kMmaChains; ++k) sum += (acc[k][0] + acc[k][1] + acc[k][2] + acc[k][3]) * (k + 1);
  sink[blockIdx.x * blockDim.x + t] = sum;
  if (timer) {
    c.cycles1 = clock64(), c.ns1 = global_ns();
    *clocks = c;
  }
}

// --- host ---------------------------------------------------------------------------
struct Options {
  const char* json = nullptr;
  double seconds = 0.04;  // per timed launch
  int repeats = 7;        // timed launches per instruction, after one warm-up
};

struct Rate {
  std::string name;
  int n = 0;  // wgmma's N
  double bit_pairs_per_instruction = 0;
  int blocks = 0, threads = 0, blocks_per_sm = 0, reps = 0;
  double instructions = 0;  // per launch
  std::vector<double> seconds;
  double median_s = 0, bit_pairs_per_s = 0, sm_clock_mhz = 0, bit_pairs_per_clock_per_sm = 0;
  std::string check = "not checked";
  long mismatches = -1, checked = 0;
  bool multiset_equal = false;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Deterministic random words (splitmix64), the same on every run.
std::vector<std::uint32_t> random_words(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint32_t> v(n);
  for (auto& x : v) {
    std::uint64_t z = (seed += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    x = static_cast<std::uint32_t>(z ^ (z >> 31));
  }
  return v;
}

// Times `launch(reps)` (which launches once and returns the instructions it
// issued): one short launch to size reps for opts.seconds, one warm-up, then
// opts.repeats timed launches; median, and the clock of the median launch.
template <class Launch>
void time_launches(const Options& opts, int sms, Clocks* clocks_d, Rate& r, Launch launch) {
  cudaEvent_t start, stop;
  KMINI_CHECK(cudaEventCreate(&start));
  KMINI_CHECK(cudaEventCreate(&stop));
  auto timed = [&](int reps, Clocks* clk) {
    KMINI_CHECK(cudaEventRecord(start));
    r.instructions = launch(reps);
    KMINI_CHECK(cudaGetLastError());
    KMINI_CHECK(cudaEventRecord(stop));
    KMINI_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    KMINI_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (clk) KMINI_CHECK(cudaMemcpy(clk, clocks_d, sizeof(Clocks), cudaMemcpyDeviceToHost));
    return ms * 1e-3;
  };
  // Grow reps until a launch takes a quarter of the target (launch overhead
  // then no longer dominates), then scale to the target; the last of these
  // launches is the warm-up.
  double reps = 64, t = timed(int(reps), nullptr);
  while (t < opts.seconds / 4 && reps < 1e9) {
    reps = std::min(1e9, reps * std::min(1000.0, std::max(2.0, opts.seconds / std::max(t, 1e-7))));
    t = timed(int(reps), nullptr);
  }
  r.reps = static_cast<int>(std::min(1e9, std::max(1.0, reps * opts.seconds / t)));
  timed(r.reps, nullptr);
  std::vector<double> mhz;
  for (int i = 0; i < opts.repeats; ++i) {
    Clocks c{};
    r.seconds.push_back(timed(r.reps, &c));
    mhz.push_back(c.ns1 > c.ns0 ? 1e3 * double(c.cycles1 - c.cycles0) / double(c.ns1 - c.ns0) : 0);
  }
  r.median_s = median(r.seconds);
  r.sm_clock_mhz = median(mhz);
  r.bit_pairs_per_s = r.instructions * r.bit_pairs_per_instruction / r.median_s;
  if (r.sm_clock_mhz > 0) r.bit_pairs_per_clock_per_sm = r.bit_pairs_per_s / (sms * r.sm_clock_mhz * 1e6);
  KMINI_CHECK(cudaEventDestroy(start));
  KMINI_CHECK(cudaEventDestroy(stop));
}

template <int N, int Sets>
Rate measure_wgmma(const Options& opts, int sms, Clocks* clocks_d) {
  constexpr int kCols = N * Sets, kWords = wg::kInputWords, kCheckReps = 3;
  Rate r;
  r.name = "wgmma.mma_async.sync.aligned.m64n" + std::to_string(N) + "k256.s32.b1.b1.and.popc";
  r.n = N;
  r.bit_pairs_per_instruction = wg::wgmma_bit_pairs(N);
  r.threads = wg::kWarpgroup;
  const std::uint32_t smem = wg::ProbeTiles{N, Sets}.bytes();
  auto kernel = wgmma_kernel<N, Sets>;
  KMINI_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  KMINI_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, kernel, r.threads, smem));
  if (r.blocks_per_sm < 1) {
    std::fprintf(stderr, "kmini_wgmma_probe: %s: no block fits an SM\n", r.name.c_str());
    std::exit(1);
  }
  r.blocks = sms * r.blocks_per_sm;

  const auto a = random_words(std::size_t(wg::kM) * kWords, 0xA11CE + N);
  const auto b = random_words(std::size_t(kCols) * kWords, 0xB0B + N);
  std::uint32_t *a_d, *b_d;
  std::int32_t *d_d, *sink_d;
  KMINI_CHECK(cudaMalloc(&a_d, a.size() * 4));
  KMINI_CHECK(cudaMalloc(&b_d, b.size() * 4));
  KMINI_CHECK(cudaMalloc(&d_d, std::size_t(wg::kM) * kCols * 4));
  KMINI_CHECK(cudaMalloc(&sink_d, std::size_t(r.blocks) * r.threads * 4));
  KMINI_CHECK(cudaMemcpy(a_d, a.data(), a.size() * 4, cudaMemcpyHostToDevice));
  KMINI_CHECK(cudaMemcpy(b_d, b.data(), b.size() * 4, cudaMemcpyHostToDevice));

  // The check: one block, kCheckReps reps, against the host.
  KMINI_CHECK(cudaMemset(d_d, 0xFF, std::size_t(wg::kM) * kCols * 4));
  kernel<<<1, r.threads, smem>>>(a_d, b_d, kCheckReps, d_d, sink_d, clocks_d);
  KMINI_CHECK_LAUNCH("wgmma check");
  std::vector<std::int32_t> d(std::size_t(wg::kM) * kCols);
  KMINI_CHECK(cudaMemcpy(d.data(), d_d, d.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<std::int64_t> ref(d.size());
  wg::reference_tile(a.data(), wg::kM, b.data(), kCols, kWords, kCheckReps, ref.data());
  r.checked = long(d.size());
  r.mismatches = 0;
  for (std::size_t i = 0; i < d.size(); ++i) r.mismatches += std::int64_t(d[i]) != ref[i];
  std::vector<std::int64_t> got(d.begin(), d.end()), want(ref);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  r.multiset_equal = got == want;  // equal values in other places: the fragment mapping, not the tiles
  r.check = r.mismatches == 0 ? "exact" : std::to_string(r.mismatches) + " of " + std::to_string(r.checked) + " differ";

  time_launches(opts, sms, clocks_d, r, [&](int reps) {
    kernel<<<r.blocks, r.threads, smem>>>(a_d, b_d, reps, nullptr, sink_d, clocks_d);
    return double(r.blocks) * reps * kKSteps * Sets;
  });
  KMINI_CHECK(cudaFree(a_d));
  KMINI_CHECK(cudaFree(b_d));
  KMINI_CHECK(cudaFree(d_d));
  KMINI_CHECK(cudaFree(sink_d));
  return r;
}

Rate measure_mma_sync(const Options& opts, int sms, Clocks* clocks_d) {
  Rate r;
  r.name = "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc";
  r.bit_pairs_per_instruction = wg::kMmaSyncBitPairs;
  r.threads = kMmaWarps * wg::kWarp;
  KMINI_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, mma_sync_kernel, r.threads, 0));
  r.blocks = sms * std::max(1, r.blocks_per_sm);
  std::int32_t* sink_d;
  KMINI_CHECK(cudaMalloc(&sink_d, std::size_t(r.blocks) * r.threads * 4));
  time_launches(opts, sms, clocks_d, r, [&](int reps) {
    mma_sync_kernel<<<r.blocks, r.threads>>>(reps, sink_d, clocks_d);
    return double(r.blocks) * kMmaWarps * reps * kMmaChains;
  });
  KMINI_CHECK(cudaFree(sink_d));
  return r;
}

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) >= 0x20) o += ch;
  }
  return o + "\"";
}

std::string number(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", x);
  return buf;
}

std::string rate_json(const Rate& r, double mma_sync_rate) {
  std::string s = "    {\"instruction\": " + json_string(r.name);
  s += ", \"bit_pairs_per_instruction\": " + number(r.bit_pairs_per_instruction);
  s += ", \"blocks\": " + std::to_string(r.blocks) + ", \"threads_per_block\": " + std::to_string(r.threads);
  s += ", \"blocks_per_sm\": " + std::to_string(r.blocks_per_sm) + ", \"reps\": " + std::to_string(r.reps);
  s += ", \"instructions_per_launch\": " + number(r.instructions) + ", \"launch_seconds\": [";
  for (std::size_t i = 0; i < r.seconds.size(); ++i) s += (i ? ", " : "") + number(r.seconds[i]);
  s += "], \"median_seconds\": " + number(r.median_s) + ", \"bit_pairs_per_s\": " + number(r.bit_pairs_per_s);
  s += ", \"sm_clock_mhz_measured\": " + number(r.sm_clock_mhz);
  s += ", \"bit_pairs_per_clock_per_sm\": " + number(r.bit_pairs_per_clock_per_sm);
  s += ", \"over_mma_sync\": " + number(r.bit_pairs_per_s / mma_sync_rate);
  s += ", \"check\": " + json_string(r.check);
  if (r.mismatches >= 0) {
    s += ", \"check_elements\": " + std::to_string(r.checked) +
         ", \"check_mismatches\": " + std::to_string(r.mismatches);
    s += std::string(", \"check_values_equal_as_multiset\": ") + (r.multiset_equal ? "true" : "false");
  }
  return s + "}";
}

int usage(const char* why) {
  std::fprintf(stderr, "kmini_wgmma_probe: %s\nusage: kmini_wgmma_probe [--json PATH] [--seconds S] [--repeats R]\n",
               why);
  return 2;
}

bool write_out(const Options& opts, const std::string& text) {
  if (!opts.json) return std::fputs(text.c_str(), stdout) >= 0;
  FILE* f = std::fopen(opts.json, "w");
  if (!f) {
    std::fprintf(stderr, "kmini_wgmma_probe: cannot write %s: %s\n", opts.json, std::strerror(errno));
    return false;
  }
  const bool ok = std::fputs(text.c_str(), f) >= 0;
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return usage(("'" + arg + "' needs a value or is unknown").c_str());
    char* end = nullptr;
    if (arg == "--json") {
      opts.json = argv[++i];
    } else if (arg == "--seconds") {
      opts.seconds = std::strtod(argv[++i], &end);
      if (*end || !(opts.seconds > 0 && opts.seconds <= 10)) return usage("--seconds: a number in (0, 10]");
    } else if (arg == "--repeats") {
      opts.repeats = static_cast<int>(std::strtol(argv[++i], &end, 10));
      if (*end || opts.repeats < 1 || opts.repeats > 100) return usage("--repeats: an integer in [1, 100]");
    } else {
      return usage(("unknown argument '" + arg + "'").c_str());
    }
  }

  int dev = 0, clock_khz = 0;
  KMINI_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  KMINI_CHECK(cudaGetDeviceProperties(&prop, dev));
  KMINI_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  std::string head = "{\n  \"program\": \"kmini_wgmma_probe\",\n  \"device\": " + json_string(prop.name) +
                     ",\n  \"compute_capability\": \"" + std::to_string(prop.major) + "." + std::to_string(prop.minor) +
                     "\",\n  \"sm_count\": " + std::to_string(prop.multiProcessorCount) +
                     ",\n  \"clock_rate_khz\": " + std::to_string(clock_khz);
  if (prop.major != 9 || prop.minor != 0) {
    const std::string why = "built for sm_90a only (wgmma): compute capability " + std::to_string(prop.major) + "." +
                            std::to_string(prop.minor) + " cannot run it";
    std::fprintf(stderr, "kmini_wgmma_probe: %s: skipped\n", why.c_str());
    write_out(opts, head + ",\n  \"skipped\": " + json_string(why) + "\n}\n");
    return 77;
  }
  const int sms = prop.multiProcessorCount;
  Clocks* clocks_d;
  KMINI_CHECK(cudaMalloc(&clocks_d, sizeof(Clocks)));

  std::vector<Rate> rates;
  rates.push_back(measure_mma_sync(opts, sms, clocks_d));
  rates.push_back(measure_wgmma<256, 1>(opts, sms, clocks_d));
  rates.push_back(measure_wgmma<128, 1>(opts, sms, clocks_d));
  rates.push_back(measure_wgmma<8, 8>(opts, sms, clocks_d));  // 8 accumulators: issued densely
  KMINI_CHECK(cudaFree(clocks_d));

  const Rate& mma = rates[0];
  const Rate* best = &rates[1];
  bool exact = true;
  for (std::size_t i = 1; i < rates.size(); ++i) {
    exact = exact && rates[i].mismatches == 0;
    if (rates[i].bit_pairs_per_s > best->bit_pairs_per_s) best = &rates[i];
  }
  std::string out = head + ",\n  \"seconds_per_launch\": " + number(opts.seconds) +
                    ",\n  \"repeats\": " + std::to_string(opts.repeats) + ",\n  \"rates\": [\n";
  for (std::size_t i = 0; i < rates.size(); ++i)
    out += rate_json(rates[i], mma.bit_pairs_per_s) + (i + 1 < rates.size() ? ",\n" : "\n");
  out += "  ],\n  \"wgmma_check\": " + json_string(exact ? "exact" : "mismatches (see each rate's check)");
  out += ",\n  \"best_wgmma\": " + json_string(best->name);
  out += ",\n  \"best_wgmma_over_mma_sync\": " + number(best->bit_pairs_per_s / mma.bit_pairs_per_s) + "\n}\n";
  if (!write_out(opts, out)) return 1;
  std::fprintf(stderr, "kmini_wgmma_probe: %s, %d SMs at %.0f MHz: mma.sync m16n8k256 %.3g bit-pairs/s, ", prop.name,
               sms, mma.sm_clock_mhz, mma.bit_pairs_per_s);
  for (std::size_t i = 1; i < rates.size(); ++i)
    std::fprintf(stderr, "wgmma n%d %.3g (%.2fx, %s)%s", rates[i].n, rates[i].bit_pairs_per_s,
                 rates[i].bit_pairs_per_s / mma.bit_pairs_per_s, rates[i].check.c_str(),
                 i + 1 < rates.size() ? ", " : "\n");
  return exact ? 0 : 3;
}
