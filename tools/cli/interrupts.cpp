#include "interrupts.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

namespace attend::cli {
namespace {

struct Registry {
  std::recursive_mutex mutex;
  std::vector<std::function<void()>*> cleanups;  // of the live OnInterrupt objects
  std::function<void(int)> handler;               // a live TakeInterrupts' (empty: none)
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: the watching thread outlives main()
  return *r;
}

// The signals watched: those not ignored when attend started — a signal ignored then
// (nohup's SIGHUP, SIGINT for a background job of a script) stays ignored.
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(s, nullptr, &current) == 0 && current.sa_handler != SIG_IGN) sigaddset(&set, s);
  }
  return set;
}

// Runs the cleanups, then dies of `signal` as if it had never been caught.
[[noreturn]] void end_with(int signal) {
  {
    const auto held = OnInterrupt::hold();
    const char* name = signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "SIGHUP";
    // After the terminal's "^C" or a progress line, on a line of its own.
    std::fprintf(stderr, "%sattend: interrupted by %s\n", ::isatty(2) ? "\n" : "", name);
    for (auto* cleanup : registry().cleanups) (*cleanup)();
    std::fflush(stderr);
    // The lock stays held: nothing changes what the cleanups left while the process ends.
    ::signal(signal, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, signal);
    ::pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
    ::raise(signal);  // to this thread, where it is no longer blocked: the process ends
    ::_exit(128 + signal);  // (not reached)
  }
}

}  // namespace

void watch_interrupts() {
  const sigset_t set = watched_signals();
  if (sigisemptyset(&set)) return;
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([set] {
    for (;;) {
      int signal = 0;
      if (::sigwait(&set, &signal) != 0) continue;
      std::function<void(int)> handler;
      {
        const auto held = OnInterrupt::hold();
        handler = registry().handler;
      }
      if (!handler) end_with(signal);
      handler(signal);
    }
  }).detach();
}

OnInterrupt::OnInterrupt(std::function<void()> cleanup) : cleanup_(std::move(cleanup)) {
  const auto held = hold();
  registry().cleanups.push_back(&cleanup_);
}

OnInterrupt::~OnInterrupt() {
  const auto held = hold();
  auto& c = registry().cleanups;
  c.erase(std::remove(c.begin(), c.end(), &cleanup_), c.end());
}

TakeInterrupts::TakeInterrupts(std::function<void(int)> handler) {
  const auto held = OnInterrupt::hold();
  registry().handler = std::move(handler);
}

TakeInterrupts::~TakeInterrupts() {
  const auto held = OnInterrupt::hold();
  registry().handler = nullptr;
}

std::unique_lock<std::recursive_mutex> OnInterrupt::hold() { return std::unique_lock<std::recursive_mutex>(registry().mutex); }

}  // namespace attend::cli
