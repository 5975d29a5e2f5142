// What fork() leaves behind in a child: only the thread that forked. The engine's
// worker threads (batch_workers.hpp) do not exist there, and a lock that one of them
// held at the moment of the fork stays locked for ever. Two tools, so that a child —
// os.fork(), a multiprocessing "fork" pool, a C program's fork() — can use a
// translator or encoder its parent made:
//
// - fork_generation(): bumped in every child, so that an object that owns threads
//   sees at its next use that they are gone and starts new ones (lazily, in the child).
// - ForkSafeMutex: a mutex that fork() never copies while it is held. Before a fork,
//   the forking thread takes every live ForkSafeMutex (so no other thread is inside
//   the state it guards), and releases them on both sides after.
//
// A ForkSafeMutex guards leaf state only: code holding one never takes another, never
// makes or destroys one and never forks — the order in which fork takes them then
// cannot deadlock.
#pragma once

#include <cstdint>
#include <mutex>

namespace attend::runtime {

// The number of fork()s between the process's start and this process (0 in the
// original process, 1 in its child, 2 in a grandchild …).
std::uint64_t fork_generation();

class ForkSafeMutex {
 public:
  ForkSafeMutex();
  ~ForkSafeMutex();
  ForkSafeMutex(const ForkSafeMutex&) = delete;
  ForkSafeMutex& operator=(const ForkSafeMutex&) = delete;

  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
  bool try_lock() { return mutex_.try_lock(); }

 private:
  friend struct ForkRegistry;
  std::mutex mutex_;
  ForkSafeMutex* previous_ = nullptr;  // the registry's list of live mutexes
  ForkSafeMutex* next_ = nullptr;
};

}  // namespace attend::runtime
