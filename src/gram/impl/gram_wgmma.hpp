#pragma once
// The wgmma engine's host interface (gram.tensor_core_tile: warpgroup64x128):
// what the Kokkos side (gram_kernels.hpp's dispatch, gram_config.cpp's check)
// calls. The engine itself, gram_wgmma_engine.cu, is compiled by plain nvcc
// for sm_90a alone (wgmma exists there, not on sm_90, and Kokkos' sm_90 pass
// rejects it), in CUDA builds with KMINI_WGMMA_ENGINE; KMINI_GRAM_WGMMA says
// the build has it. Its shape and index math: gram_wgmma_layout.hpp.
#include "gram/impl/gram_block_tiles.hpp"

#include <cstdint>
#include <string>

namespace kmini::gram::wgmma {

// The current CUDA device's compute capability as 10 major + minor (90 for
// H100 and H200, the only devices sm_90a code runs on); 0 without a device.
int device_capability();

// Where the engine cannot run, why (this build, or this device); empty where it can.
inline std::string unavailable() {
#if defined(KMINI_GRAM_WGMMA)
  const int cc = device_capability();
  if (cc == 90) return "";
  return "it runs on compute capability 9.0 GPUs (H100, H200) only; " +
         (cc > 0 ? "this one is " + std::to_string(cc / 10) + "." + std::to_string(cc % 10)
                 : std::string("none was found"));
#else
  return "this build has no wgmma engine (it needs a CUDA build with KMINI_WGMMA_ENGINE, nvcc for sm_90a)";
#endif
}

// Window p of C (`tiles` block tiles of 128 x 128: tensor_core::block_tiles)
// on `stream` (a cudaStream_t), by a grid of at most as many blocks as the
// device runs at once, each taking tiles in turn. Returns nullptr, or what
// failed (a CUDA error's words).
const char* launch(const tensor_core::BlockedArgs& p, std::int64_t tiles, void* stream);

// The engine's roof, measured now: m64n128k256 .b1 .and.popc (the engine's
// instruction) on operands staged once in shared memory, on every SM of the
// current device (the wgmma probe's kernel, gram_wgmma_probe.cuh), on
// `stream`, the best of three launches of about 10 ms. Returns nullptr and
// sets bit_pairs_per_s, or what failed.
const char* probe(void* stream, double& bit_pairs_per_s);

}  // namespace kmini::gram::wgmma
