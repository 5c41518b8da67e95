#include "core/termination.hpp"

#include "core/errors.hpp"

#include <unistd.h>
#include <atomic>
#include <cstring>

namespace kmini::termination {

namespace {

constexpr int kSlots = 64;        // outputs in flight at once: a handful at most
constexpr int kPathBytes = 4096;  // PATH_MAX on Linux
struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled, 2 registered
  char path[kPathBytes];
  char probe[kPathBytes + 32];  // MPI-IO's lock probe beside it, or empty
};
Slot g_slots[kSlots];
volatile std::sig_atomic_t g_print = 0;
volatile std::sig_atomic_t g_decided = -1;  // exit status once decided, else -1
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};

void write_all(const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    const ssize_t n = ::write(STDERR_FILENO, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

// Async-signal-safe decimal formatting.
void format_int(int v, char* out) {
  char tmp[16];
  int len = 0;
  do {
    tmp[len++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0 && len < 15);
  for (int i = 0; i < len; ++i) out[i] = tmp[len - 1 - i];
  out[len] = '\0';
}

extern "C" void on_signal(int sig) {
  for (auto& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2) {
      ::unlink(s.path);
      if (s.probe[0]) ::unlink(s.probe);
    }
  if (g_decided >= 0) ::_exit(g_decided);
  if (g_print) {
    const char* name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : sig == SIGHUP ? "SIGHUP" : "a signal";
    char status[16];
    format_int(128 + sig, status);
    write_all("kmini: error: terminated by ");
    write_all(name);
    write_all(": temporary output files removed, previous outputs unchanged (exit ");
    write_all(status);
    write_all(")\n");
  }
  ::_exit(128 + sig);
}

}  // namespace

void install_handlers(bool print_rank) {
  g_print = print_rank ? 1 : 0;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : kSignals) sigaddset(&sa.sa_mask, s);  // one handler at a time
  for (int s : kSignals) ::sigaction(s, &sa, nullptr);
  std::signal(SIGXFSZ, SIG_IGN);
}

void status_decided(int status) { g_decided = status; }

void block_signals(bool block) {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kSignals) sigaddset(&set, s);
  ::pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

TemporaryFile::TemporaryFile(const std::string& path, int mpi_io_rank) {
  if (path.size() >= static_cast<std::size_t>(kPathBytes))
    throw RuntimeFailure(path + ": temporary path too long to register for clean-up");
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
      std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
      const std::string probe = mpi_io_rank < 0 ? std::string() : path + ".locktest." + std::to_string(mpi_io_rank);
      std::memcpy(g_slots[i].probe, probe.c_str(), probe.size() + 1);
      g_slots[i].state.store(2, std::memory_order_release);
      slot_ = i;
      return;
    }
  }
  throw RuntimeFailure(path + ": more than " + std::to_string(kSlots) + " output files in flight");
}

TemporaryFile& TemporaryFile::operator=(TemporaryFile&& other) noexcept {
  if (this != &other) {
    release();
    slot_ = other.slot_;
    other.slot_ = -1;
  }
  return *this;
}

void TemporaryFile::release() {
  if (slot_ < 0) return;
  g_slots[slot_].state.store(0, std::memory_order_release);
  slot_ = -1;
}

int registered_count() {
  int n = 0;
  for (const auto& s : g_slots) n += s.state.load(std::memory_order_acquire) == 2 ? 1 : 0;
  return n;
}

}  // namespace kmini::termination
