// Ctrl-C (SIGINT), SIGTERM and SIGHUP end `attend` as they end any program — killed by
// that signal, so a shell reports 128 + its number (130, 143, 129) — but only after
// what was being written is put in order: an output file being replaced keeps the
// lines written so far as FILE.partial, as after any other failure, and no hidden
// temporary file is left behind (output_file.hpp).
//
// The signals are blocked in every thread and taken by a thread of their own
// (sigwait), so the cleanups are ordinary code, not signal handlers: a cleanup may lock
// and flush a stdio stream, rename a file and print.
#pragma once

#include <functional>
#include <mutex>

namespace attend::cli {

// Starts the watching thread. Call it first thing in main(), before any other thread
// exists: threads inherit the blocked signals from the thread that starts them.
void watch_interrupts();

// A command that ends on its own when told (attend serve: stop accepting, answer what is
// queued, exit 0) takes the signals instead, for as long as this object lives: each
// signal calls `handler` on the watching thread, and the process goes on.
class TakeInterrupts {
 public:
  explicit TakeInterrupts(std::function<void(int signal)> handler);
  ~TakeInterrupts();
  TakeInterrupts(const TakeInterrupts&) = delete;
  TakeInterrupts& operator=(const TakeInterrupts&) = delete;
};

// A cleanup registered for as long as this object lives, run on the watching thread
// when one of the signals arrives, before the process ends.
class OnInterrupt {
 public:
  explicit OnInterrupt(std::function<void()> cleanup);
  ~OnInterrupt();  // waits for a cleanup in progress
  OnInterrupt(const OnInterrupt&) = delete;
  OnInterrupt& operator=(const OnInterrupt&) = delete;

  // Held while state a cleanup looks at changes (a file renamed into place): a signal
  // arriving meanwhile is handled after, on what the change left. Re-entrant.
  static std::unique_lock<std::recursive_mutex> hold();

 private:
  std::function<void()> cleanup_;
};

}  // namespace attend::cli
