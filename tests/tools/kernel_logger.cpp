// A minimal Kokkos Tools library (the Kokkos Profiling C interface, the same
// on Kokkos 3.4 and 4.x) that records every kernel launch and region to the
// file named by KMINI_KERNEL_LOG, one line per event:
//   push <region>          a region begins
//   pop                    the innermost region ends
//   for|reduce|scan <name> a kernel begins (its end is not needed)
//   init / finalize        the library was loaded / Kokkos finalised
// Loaded with --kokkos-tools-libs=<this library> by tests/tools/check_kernel_log.py.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

std::FILE* log_file = nullptr;

void record(const char* what, const char* name) {
  if (!log_file) return;
  if (name) std::fprintf(log_file, "%s %s\n", what, name);
  else std::fprintf(log_file, "%s\n", what);
}

}  // namespace

extern "C" {

// deviceInfo is Kokkos_Profiling_KokkosPDeviceInfo*; only its address is passed.
void kokkosp_init_library(const int /*load_sequence*/, const std::uint64_t /*interface_version*/,
                          const std::uint32_t /*device_info_count*/, void* /*device_info*/) {
  const char* path = std::getenv("KMINI_KERNEL_LOG");
  if (!path || !*path) {
    std::fprintf(stderr, "kmini kernel logger: KMINI_KERNEL_LOG is not set, nothing is recorded\n");
    return;
  }
  log_file = std::fopen(path, "w");
  if (!log_file) std::fprintf(stderr, "kmini kernel logger: cannot open %s\n", path);
  record("init", nullptr);
}

void kokkosp_finalize_library() {
  record("finalize", nullptr);
  if (log_file) std::fclose(log_file);
  log_file = nullptr;
}

void kokkosp_begin_parallel_for(const char* name, const std::uint32_t, std::uint64_t* kernel_id) {
  *kernel_id = 0;
  record("for", name);
}
void kokkosp_end_parallel_for(const std::uint64_t) {}

void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t, std::uint64_t* kernel_id) {
  *kernel_id = 0;
  record("reduce", name);
}
void kokkosp_end_parallel_reduce(const std::uint64_t) {}

void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t, std::uint64_t* kernel_id) {
  *kernel_id = 0;
  record("scan", name);
}
void kokkosp_end_parallel_scan(const std::uint64_t) {}

void kokkosp_push_profile_region(const char* name) { record("push", name); }
void kokkosp_pop_profile_region() { record("pop", nullptr); }

}  // extern "C"
