#pragma once
// KMINI_TEST_SEGV_TRACE=1: a SIGSEGV prints where it happened, for a crash on
// a machine without a usable debugger (no gdb, or a cuda-gdb that stops in
// the driver). OpenMPI's own handler prints one frame:
// a jump to address 0 leaves no frame to unwind from, so this one also prints
// the return address on top of the stack (the call that jumped) and resolves
// the addresses with dladdr (unstripped test binaries: bundle.sh --debug-copy).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__linux__) && defined(__x86_64__)
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

namespace kmini::test {

inline void print_address(const char* what, void* address) {
  Dl_info info{};
  if (dladdr(address, &info) && info.dli_fname) {
    std::fprintf(stderr, "segv_trace: %s %p = %s+0x%lx (%s)\n", what, address, info.dli_sname ? info.dli_sname : "?",
                 static_cast<unsigned long>(static_cast<char*>(address) -
                                            static_cast<char*>(info.dli_sname ? info.dli_saddr : info.dli_fbase)),
                 info.dli_fname);
  } else {
    std::fprintf(stderr, "segv_trace: %s %p\n", what, address);
  }
}

inline void segv_trace_handler(int, siginfo_t* si, void* context) {
  const auto* uc = static_cast<const ucontext_t*>(context);
  void* pc = reinterpret_cast<void*>(uc->uc_mcontext.gregs[REG_RIP]);
  void** sp = reinterpret_cast<void**>(uc->uc_mcontext.gregs[REG_RSP]);
  std::fprintf(stderr, "segv_trace: SIGSEGV at address %p\n", si->si_addr);
  print_address("pc", pc);
  for (int k = 0; k < 8; ++k) print_address(k == 0 ? "[sp] (the caller, after a jump to 0)" : "stack word", sp[k]);
  void* frames[64];
  const int n = backtrace(frames, 64);
  for (int k = 0; k < n; ++k) print_address("frame", frames[k]);
  std::fflush(stderr);
  _exit(139);
}

// Call after MPI_Init (OpenMPI installs its own handler there).
inline void install_segv_trace() {
  const char* on = std::getenv("KMINI_TEST_SEGV_TRACE");
  if (!on || std::strcmp(on, "1") != 0) return;
  struct sigaction sa {};
  sa.sa_sigaction = segv_trace_handler;
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGSEGV, &sa, nullptr);
}

}  // namespace kmini::test
#else
namespace kmini::test {
inline void install_segv_trace() {}
}  // namespace kmini::test
#endif
