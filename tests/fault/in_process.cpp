#include "in_process.hpp"

#include "driver/app.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include "../support/relocated_path.hpp"

namespace fs = std::filesystem;

namespace kmini::fault {

namespace {

const Environment* g_env = nullptr;
int g_real_stderr = -1;
char g_current[4096] = "";                   // what to print if the case crashes or hangs
std::atomic<std::int64_t> g_deadline_ms{0};  // 0: no case running

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void say(const char* what) {
  if (g_real_stderr < 0) return;
  ssize_t ignored = ::write(g_real_stderr, what, std::strlen(what));
  ignored = ::write(g_real_stderr, g_current, std::strlen(g_current));
  (void)ignored;
}

extern "C" void on_crash(int sig) {
  say(sig == SIGABRT ? "\n[ fault    ] kmini ABORTED in case:\n" : "\n[ fault    ] kmini CRASHED in case:\n");
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void watchdog() {
  while (true) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto deadline = g_deadline_ms.load();
    if (deadline && now_ms() > deadline) {
      say("\n[ fault    ] kmini HUNG (time limit passed) in case:\n");
      ::_exit(124);
    }
  }
}

// Sends a file descriptor to a file until finish().
class FdCapture {
 public:
  FdCapture(int fd, const std::string& path) : fd_(fd), path_(path) {
    saved_ = ::dup(fd);
    const int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(f, fd);
    ::close(f);
  }
  std::string finish() {
    ::dup2(saved_, fd_);
    ::close(saved_);
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
  }

 private:
  int fd_, saved_;
  std::string path_;
};

}  // namespace

void set_environment(const Environment* env) { g_env = env; }
const Environment& environment() { return *g_env; }

std::string work_dir() { return kmini::test::relocated(KMINI_TEST_WORK) + "/fault_generator"; }

void install_guards() {
  g_real_stderr = ::dup(2);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) std::signal(sig, on_crash);
  std::thread(watchdog).detach();
}

InProcessRun run_in_process(const BadCase& c, const std::string& dir) {
  const auto args = arguments(c);
  std::vector<const char*> argv{"kmini"};
  for (const auto& a : args) argv.push_back(a.c_str());
  const int argc = static_cast<int>(argv.size());
  argv.push_back(nullptr);

  std::snprintf(g_current, sizeof g_current, "%s", describe(c, dir).c_str());
  const fs::path previous = fs::current_path();
  fs::current_path(dir);

  InProcessRun r;
  std::ostringstream out, err, cout_text, cerr_text;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  // Per process: ctest -j runs families side by side.
  const std::string capture = work_dir() + "/.captured." + std::to_string(::getpid());
  FdCapture fd1(1, capture + ".stdout"), fd2(2, capture + ".stderr");
  auto* cout_buf = std::cout.rdbuf(cout_text.rdbuf());
  auto* cerr_buf = std::cerr.rdbuf(cerr_text.rdbuf());
  const auto start = std::chrono::steady_clock::now();
  g_deadline_ms = now_ms() + static_cast<std::int64_t>(c.time_limit_s * 1000);
  try {
    r.status = run_app(*g_env, argc, argv.data(), out, err);
  } catch (const std::exception& e) {
    r.exception = e.what();
  } catch (...) {
    r.exception = "an exception not derived from std::exception";
  }
  g_deadline_ms = 0;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout.rdbuf(cout_buf);
  std::cerr.rdbuf(cerr_buf);
  std::fflush(nullptr);
  r.out = out.str() + cout_text.str() + fd1.finish();
  r.err = err.str() + cerr_text.str() + fd2.finish();
  std::remove((capture + ".stdout").c_str());
  std::remove((capture + ".stderr").c_str());
  fs::current_path(previous);
  return r;
}

}  // namespace kmini::fault
