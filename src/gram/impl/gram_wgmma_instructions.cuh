#pragma once
// Hopper's warpgroup MMA for 1-bit operands, as inline PTX: what the wgmma
// probe (benchmarks/wgmma_probe) and the wgmma engine (gram_wgmma_engine.cu)
// issue. Device code for sm_90a only (wgmma exists there, not on sm_90):
// include it only from translation units nvcc compiles for sm_90a alone.
#include <cstdint>

namespace kmini::gram::wgmma::instructions {

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
// Generic-proxy writes to shared memory made visible to the async proxy that wgmma reads through.
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// D (64 x 8) += A AND-popc B; scale-d 1: accumulate.
__device__ __forceinline__ void wgmma_n8(std::int32_t (&d)[4], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n8k256.s32.b1.b1.and.popc "
      "{%0, %1, %2, %3}, "
      "%4, %5, 1;\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
      : "l"(desc_a), "l"(desc_b));
}

// The accumulator operands d[i] .. d[i + 7] (read and written), and 64 of them from d[i].
#define KMINI_WGMMA_D8(i)                                                                                     \
  "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), "+r"(d[i + 6]), \
      "+r"(d[i + 7])
#define KMINI_WGMMA_D64(i)                                                                                          \
  KMINI_WGMMA_D8(i), KMINI_WGMMA_D8(i + 8), KMINI_WGMMA_D8(i + 16), KMINI_WGMMA_D8(i + 24), KMINI_WGMMA_D8(i + 32), \
      KMINI_WGMMA_D8(i + 40), KMINI_WGMMA_D8(i + 48), KMINI_WGMMA_D8(i + 56)

// D (64 x 128) += A AND-popc B; scale-d 1: accumulate.
__device__ __forceinline__ void wgmma_n128(std::int32_t (&d)[64], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n128k256.s32.b1.b1.and.popc "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
      "%64, %65, 1;\n"
      : KMINI_WGMMA_D64(0)
      : "l"(desc_a), "l"(desc_b));
}

// D (64 x 256) += A AND-popc B; scale-d 1: accumulate.
__device__ __forceinline__ void wgmma_n256(std::int32_t (&d)[128], std::uint64_t desc_a, std::uint64_t desc_b) {
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n256k256.s32.b1.b1.and.popc "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
      "%128, %129, 1;\n"
      : KMINI_WGMMA_D64(0), KMINI_WGMMA_D64(64)
      : "l"(desc_a), "l"(desc_b));
}

#undef KMINI_WGMMA_D64
#undef KMINI_WGMMA_D8

template <int N>
__device__ __forceinline__ void wgmma(std::int32_t (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b) {
  if constexpr (N == 256) wgmma_n256(d, desc_a, desc_b);
  if constexpr (N == 128) wgmma_n128(d, desc_a, desc_b);
  if constexpr (N == 8) wgmma_n8(d, desc_a, desc_b);
}

}  // namespace kmini::gram::wgmma::instructions
