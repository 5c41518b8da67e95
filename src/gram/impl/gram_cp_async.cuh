#pragma once
// cp.async (sm_80 and newer): 16-byte copies from global to shared memory
// that bypass the registers, in commit groups the block waits for. What the
// block kernels stage their panels with (gram_tensor_core_blocked.hpp, the
// wgmma engine's gram_wgmma_engine.cu). Device code: use it only where the
// device pass is for sm_80 or newer.
#if defined(__CUDACC__)

namespace kmini::gram::cp_async {

// src-size 0 (full false): nothing read, the 16 bytes zero-filled (rows and words past the end).
__device__ __forceinline__ void copy16(unsigned dst, const void* src, bool full) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(full ? 16 : 0));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Until at most N of this thread's groups are pending.
template <int N>
__device__ __forceinline__ void wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace kmini::gram::cp_async

#endif
